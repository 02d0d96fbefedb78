export { type Dashboard, type DashboardOptions, serveDashboard } from './serve-dashboard';
export type { DashboardSource, DashboardSources } from './sources';
