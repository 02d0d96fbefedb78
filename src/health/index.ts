export {
  type DispatcherHealth,
  HealthCheck,
  type HealthOptions,
  type HealthReport,
  type HealthSource,
  type HealthSources,
} from './health-check';
export type { HealthProblem, HealthReason, HealthStatus } from './health-reason';
