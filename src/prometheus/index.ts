export { exportToPrometheus, type PrometheusExportOptions } from './export-to-prometheus';
export type { PrometheusRegistry } from './registry';
