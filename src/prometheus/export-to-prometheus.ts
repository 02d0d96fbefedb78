import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { DispatchMetrics } from '../metrics';
import { isDispatchMetrics } from '../metrics/is-metrics';
import { describe, optionsObject } from '../validate';
import {
  DEFAULT_PREFIX,
  DURATION,
  EXECUTOR_LABEL,
  hotKeyLabelsOption,
  INSTRUMENTS,
  ownLabelNames,
  prometheusName,
} from './instruments';
import type { PrometheusRegistry } from './registry';
import { type ScrapedDispatcher, scrape } from './scrape';
import type { Sample } from './text-format';

/** Options of `exportToPrometheus`. */
export interface PrometheusExportOptions {
  /**
   * Labels of every sample, e.g. `{ dispatcher: 'orders' }` (the label the dashboard's `/metrics` uses) to
   * tell dispatchers apart. Every export into one registry (with one prefix) uses the same label names,
   * each with its own values. Default none.
   */
  labels?: Record<string, string>;
  /** Prefix of the metric names. Default `'keyed_dispatch'`. */
  prefix?: string;
  /**
   * How many of the hottest keys get a series of their own in `keyed_dispatch_key_backlog`, labelled
   * `key`. Each key that ever reaches the top is a new series kept by Prometheus, so it is off by
   * default; `keyed_dispatch_hottest_key_backlog` gives the hottest key's backlog without its name.
   * Only as many as the metrics list (`hotKeys`). Integer from 0 to 100. Default 0.
   */
  hotKeyLabels?: number;
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
/** Label names the instruments use themselves, or Prometheus reserves. */
const RESERVED = [...new Set([...INSTRUMENTS.flatMap(ownLabelNames), EXECUTOR_LABEL, 'le', 'quantile'])];

/**
 * Registers a `DispatchMetrics` in a prom-client `Registry` (`prom-client` is an optional peer
 * dependency), with the names and labels of the dashboard's `GET /metrics` and of the OpenTelemetry
 * export as a Prometheus exporter writes them. Gauges and counters come from one `read()` per
 * dispatcher per scrape; handler durations go into a histogram as they are timed (one handler in
 * `sampleEvery`). Lanes are listed once per executor (labelled `executor`), however many dispatchers
 * share it; keys are not labels unless `hotKeyLabels` asks. Several dispatchers share one registry,
 * told apart by `labels`. Returns the function that stops exporting this dispatcher (the
 * last one out unregisters the metrics).
 */
export function exportToPrometheus(
  metrics: DispatchMetrics,
  registry: PrometheusRegistry,
  options: PrometheusExportOptions = {},
): () => void {
  if (!isDispatchMetrics(metrics)) {
    throw new TypeError(
      `exportToPrometheus: expected \`metrics\` to be a DispatchMetrics, got ${describe(metrics)}`,
    );
  }
  if (registry === null || typeof registry !== 'object' || typeof registry.registerMetric !== 'function') {
    throw new TypeError(
      `exportToPrometheus: expected \`registry\` to be a prom-client Registry, got ${describe(registry)}`,
    );
  }
  optionsObject('exportToPrometheus', options, ['labels', 'prefix', 'hotKeyLabels'] satisfies Array<
    keyof PrometheusExportOptions
  >);
  const hotKeyLabels = hotKeyLabelsOption('exportToPrometheus', options.hotKeyLabels);
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  if (typeof prefix !== 'string' || !METRIC_NAME.test(prefix)) {
    throw new TypeError(
      `exportToPrometheus: expected \`prefix\` to be a Prometheus metric name, got ${describe(prefix)}`,
    );
  }
  const labels = checkLabels(options.labels ?? {});

  const byPrefix = registries.get(registry) ?? new Map<string, RegistryExport>();
  registries.set(registry, byPrefix);
  let shared = byPrefix.get(prefix);
  if (shared === undefined) {
    shared = new RegistryExport(registry, prefix, Object.keys(labels).sort());
    byPrefix.set(prefix, shared);
  }
  const source: ScrapedDispatcher = { metrics, labels, hotKeyLabels };
  shared.add(source);
  const exported = shared;
  const stopDurations = metrics.onHandlerDuration((ms) => exported.durations.observe(labels, ms / 1000));
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    stopDurations();
    if (exported.remove(source)) byPrefix.delete(prefix);
  };
}

/** The instruments of one prefix in one registry, shared by the dispatchers exported there. */
const registries = new WeakMap<PrometheusRegistry, Map<string, RegistryExport>>();

class RegistryExport {
  readonly durations: Histogram;
  private readonly sources = new Set<ScrapedDispatcher>();
  private readonly instruments: Array<Gauge | Counter>;
  /** The registered names, to unregister. */
  private readonly names: string[];
  /** What the current scrape read, and the instruments it has filled: one read per dispatcher per scrape. */
  private read: Sample[][] = [];
  private readonly filled = new Set<number>();

  constructor(
    private readonly registry: PrometheusRegistry,
    prefix: string,
    private readonly labelNames: readonly string[],
  ) {
    this.names = [
      ...INSTRUMENTS.map((i) => prometheusName(prefix, i)),
      `${prefix}_${DURATION.prometheusName}`,
    ];
    this.instruments = INSTRUMENTS.map((instrument, i) => {
      const own = instrument.per === 'executor' ? [EXECUTOR_LABEL] : labelNames;
      const config = {
        name: prometheusName(prefix, instrument),
        help: instrument.help,
        labelNames: [...own, ...ownLabelNames(instrument)],
        registers: [registry as Registry],
        collect: () => this.fill(i),
      };
      return instrument.type === 'gauge' ? new Gauge(config) : new Counter(config);
    });
    this.durations = new Histogram({
      name: `${prefix}_${DURATION.prometheusName}`,
      help: DURATION.help,
      labelNames: [...labelNames],
      buckets: [...DURATION.buckets],
      registers: [registry as Registry],
    });
  }

  add(source: ScrapedDispatcher): void {
    const names = Object.keys(source.labels).sort();
    if (names.join() !== this.labelNames.join()) {
      throw new TypeError(
        `exportToPrometheus: expected \`labels\` to have the label names of the dispatchers already ` +
          `exported into this registry (${this.labelNames.join(', ') || 'none'}), got ${names.join(', ') || 'none'}`,
      );
    }
    const same = [...this.sources].find((s) =>
      this.labelNames.every((n) => s.labels[n] === source.labels[n]),
    );
    if (same !== undefined) {
      throw new TypeError(
        `exportToPrometheus: expected \`labels\` to tell this dispatcher apart from the ones already ` +
          `exported into this registry, got ${JSON.stringify(source.labels)}`,
      );
    }
    this.sources.add(source);
    this.filled.clear();
  }

  /** Removes a dispatcher; true when it was the last one (its metrics are unregistered then). */
  remove(source: ScrapedDispatcher): boolean {
    this.sources.delete(source);
    this.filled.clear();
    this.durations.remove(source.labels);
    if (this.sources.size > 0) return false;
    for (const name of this.names) this.registry.removeSingleMetric(name);
    return true;
  }

  /**
   * Sets instrument `i` from the current scrape's reads. A scrape collects every instrument once, so an
   * instrument collected again means a new scrape: the dispatchers are read anew.
   */
  private fill(i: number): void {
    if (this.filled.size === 0 || this.filled.has(i)) {
      this.read = scrape([...this.sources]);
      this.filled.clear();
    }
    this.filled.add(i);
    const metric = this.instruments[i];
    metric.reset();
    for (const sample of this.read[i]) {
      // A counter's value is the dispatcher's own running total, set anew on each scrape.
      if (metric instanceof Gauge) metric.set(sample.labels, sample.value);
      else metric.inc(sample.labels, sample.value);
    }
  }
}

function checkLabels(labels: unknown): Record<string, string> {
  optionsObject('exportToPrometheus: `labels`', labels);
  const checked: Record<string, string> = {};
  for (const [name, value] of Object.entries(labels as Record<string, unknown>)) {
    if (!LABEL_NAME.test(name) || name.startsWith('__') || RESERVED.includes(name)) {
      throw new TypeError(
        `exportToPrometheus: expected the names in \`labels\` to be Prometheus label names other than ` +
          `${RESERVED.slice(0, -1).join(', ')} and ${RESERVED.at(-1)}, got ${describe(name)}`,
      );
    }
    if (typeof value !== 'string') {
      throw new TypeError(
        `exportToPrometheus: expected \`labels.${name}\` to be a string, got ${describe(value)}`,
      );
    }
    checked[name] = value;
  }
  return checked;
}
