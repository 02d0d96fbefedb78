import type {
  BatchObservableResult,
  Histogram,
  Meter,
  Observable as OtelObservable,
} from '@opentelemetry/api';
import type { DispatchMetrics } from '../metrics';
import { executorsOf } from '../metrics/executor-lanes';
import {
  DEFAULT_PREFIX,
  DURATION,
  EXECUTOR_LABEL,
  hotKeyLabelsOption,
  INSTRUMENTS,
  type Instrument,
  ownLabels,
} from '../prometheus/instruments';
import { describe, optionsObject } from '../validate';
import type { OpenTelemetryAttributes, OpenTelemetryMeter } from './meter';

export type {
  OpenTelemetryAttributes,
  OpenTelemetryAttributeValue,
  OpenTelemetryInstrumentOptions,
  OpenTelemetryMeter,
  OpenTelemetryTracer,
} from './meter';

/** Options of `exportToOpenTelemetry`. */
export interface OpenTelemetryExportOptions {
  /** Attributes added to every data point, e.g. `{ dispatcher: 'orders' }` to tell dispatchers apart. Default none. */
  attributes?: OpenTelemetryAttributes;
  /** Prefix of the instrument names. Default `'keyed_dispatch'`. */
  prefix?: string;
  /**
   * How many of the hottest keys get data points of their own in `keyed_dispatch.key.backlog`, with a
   * `key` attribute. Each key that ever reaches the top is a new series in the backend, so it is off by
   * default; `keyed_dispatch.hottest_key.backlog` gives the hottest key's backlog without its name.
   * Only as many as the metrics list (`hotKeys`). Integer from 0 to 100. Default 0.
   */
  hotKeyLabels?: number;
}

/**
 * Publishes a `DispatchMetrics` through an OpenTelemetry `Meter` (from `@opentelemetry/api`, an optional
 * peer dependency). Counters and gauges are read from one `read()` per collection, so an exporter that
 * collects every 10 s costs one read every 10 s; handler durations are recorded into an OpenTelemetry
 * histogram as they are timed (one handler in `sampleEvery`). Returns the function that stops publishing.
 *
 * Instruments (with the default prefix): `keyed_dispatch.in_flight`, `.max_in_flight`,
 * `.live_mailboxes`, `.overflow` (gauges); `keyed_dispatch.messages.admitted` (counter);
 * `keyed_dispatch.messages.settled` (counter, `outcome`: handled, dead_lettered, failed);
 * `keyed_dispatch.failed_attempts` (counter); `keyed_dispatch.hottest_key.backlog` (gauge);
 * `keyed_dispatch.key.backlog` (gauge, `key`, with `hotKeyLabels` only); `keyed_dispatch.long_turns`
 * (counter); `keyed_dispatch.transport.faults` (counter, `operation`: fetch, commit, heartbeat,
 * connection); `keyed_dispatch.transport.lag` (gauge per partition, stream or consumer: `transport`,
 * `source`, and `partition` or `consumer` where the transport has one);
 * `keyed_dispatch.handler.duration` (histogram, s). Lanes belong to the executor:
 * `keyed_dispatch.lane.ready`, `.pinned` (gauges) and `keyed_dispatch.lane.busy_time` (counter, s)
 * have the attributes `executor` and `lane` only, once per executor among the dispatchers exported
 * through one meter.
 */
export function exportToOpenTelemetry(
  metrics: DispatchMetrics,
  meterLike: OpenTelemetryMeter,
  options: OpenTelemetryExportOptions = {},
): () => void {
  if (
    meterLike === null ||
    typeof meterLike !== 'object' ||
    typeof meterLike.createObservableGauge !== 'function'
  ) {
    throw new TypeError(
      `exportToOpenTelemetry: expected \`meter\` to be an OpenTelemetry Meter, got ${describe(meterLike)}`,
    );
  }
  optionsObject('exportToOpenTelemetry', options, ['attributes', 'prefix', 'hotKeyLabels'] satisfies Array<
    keyof OpenTelemetryExportOptions
  >);
  const limits = { hotKeyLabels: hotKeyLabelsOption('exportToOpenTelemetry', options.hotKeyLabels) };
  // Typed structurally in the signature (the API is an optional peer); it is an OpenTelemetry Meter.
  const meter = meterLike as unknown as Meter;
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  const base = options.attributes ?? {};
  const instruments = INSTRUMENTS.filter((i) => i.per === 'dispatcher');
  const observables = instruments.map((i) => observable(meter, prefix, i));

  const collect = (result: BatchObservableResult) => {
    const s = metrics.read();
    instruments.forEach((instrument, i) => {
      for (const sample of instrument.samples(s, limits)) {
        result.observe(observables[i], sample.value, { ...base, ...ownLabels(instrument, sample) });
      }
    });
  };
  meter.addBatchObservableCallback(collect, observables);
  const stopLanes = executorsThrough(meter, prefix).add(metrics);

  const duration: Histogram = meter.createHistogram(`${prefix}.${DURATION.name}`, {
    description: DURATION.help,
    unit: 's',
  });
  const stopDurations = metrics.onHandlerDuration((ms) => duration.record(ms / 1000, base));

  return () => {
    meter.removeBatchObservableCallback(collect, observables);
    stopLanes();
    stopDurations();
  };
}

function observable(meter: Meter, prefix: string, instrument: Instrument): OtelObservable {
  const options = { description: instrument.help, unit: instrument.unit };
  const name = `${prefix}.${instrument.name}`;
  return instrument.type === 'gauge'
    ? meter.createObservableGauge(name, options)
    : meter.createObservableCounter(name, options);
}

/** The executors' lanes of the dispatchers exported through one meter with one prefix: each executor once. */
const lanesByMeter = new WeakMap<Meter, Map<string, ExecutorLanesExport>>();

function executorsThrough(meter: Meter, prefix: string): ExecutorLanesExport {
  const byPrefix = lanesByMeter.get(meter) ?? new Map<string, ExecutorLanesExport>();
  lanesByMeter.set(meter, byPrefix);
  let shared = byPrefix.get(prefix);
  if (shared === undefined) {
    shared = new ExecutorLanesExport(meter, prefix, () => byPrefix.delete(prefix));
    byPrefix.set(prefix, shared);
  }
  return shared;
}

class ExecutorLanesExport {
  private readonly metrics = new Set<DispatchMetrics>();
  private readonly instruments = INSTRUMENTS.filter((i) => i.per === 'executor');
  private readonly observables: OtelObservable[];
  private readonly collect = (result: BatchObservableResult) => {
    for (const executor of executorsOf(this.metrics)) {
      this.instruments.forEach((instrument, i) => {
        for (const sample of instrument.samples(executor)) {
          const at = { [EXECUTOR_LABEL]: executor.executor, ...ownLabels(instrument, sample) };
          result.observe(this.observables[i], sample.value, at);
        }
      });
    }
  };

  constructor(
    private readonly meter: Meter,
    prefix: string,
    private readonly emptied: () => void,
  ) {
    this.observables = this.instruments.map((i) => observable(meter, prefix, i));
  }

  /** Publishes the lanes of `metrics`' executor too; returns the function that stops it. */
  add(metrics: DispatchMetrics): () => void {
    if (this.metrics.size === 0) this.meter.addBatchObservableCallback(this.collect, this.observables);
    this.metrics.add(metrics);
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      this.metrics.delete(metrics);
      if (this.metrics.size > 0) return;
      this.meter.removeBatchObservableCallback(this.collect, this.observables);
      this.emptied();
    };
  }
}

export { traceHeaders } from './trace-headers';
export { type TracedMessage, type TracingOptions, traced, tracedHandler } from './tracing';
export { jetStreamTracing, kafkaTracing, redisTracing } from './transports';
