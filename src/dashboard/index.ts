export type { DashboardOptions } from './options';
export { type Dashboard, serveDashboard } from './serve-dashboard';
export type { DashboardSource, DashboardSources } from './sources';
