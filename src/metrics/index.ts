export {
  DispatchMetrics,
  type DispatchMetricsOptions,
  type LaneMetrics,
  type MetricsSnapshot,
} from './dispatch-metrics';
export { Histogram, type LatencySummary } from './histogram';
export type { OldestUnfinished } from './oldest-unfinished';
