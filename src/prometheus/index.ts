export { exportToPrometheus, type PrometheusExportOptions } from './export-to-prometheus';
