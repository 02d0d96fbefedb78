/**
 * The part of a prom-client `Registry` this package's types name, typed structurally so that they compile
 * without `prom-client` installed (an optional peer, which the exporter needs to run). A `Registry` fits.
 */
export interface PrometheusRegistry {
  /** Registers a metric (the prom-client instruments do, given `registers`). */
  registerMetric(metric: any): void;
  /** Unregisters the metric named `name`. */
  removeSingleMetric(name: string): void;
}
