import type {
  BatchObservableResult,
  Histogram,
  Meter,
  Observable as OtelObservable,
} from '@opentelemetry/api';
import type { DispatchMetrics } from '../metrics';
import { backlogsByKeyText } from '../prometheus/key-labels';
import { describe, optionsObject } from '../validate';
import type { OpenTelemetryAttributes, OpenTelemetryMeter } from './meter';

export type {
  OpenTelemetryAttributes,
  OpenTelemetryAttributeValue,
  OpenTelemetryInstrumentOptions,
  OpenTelemetryMeter,
} from './meter';

/** Options of `exportToOpenTelemetry`. */
export interface OpenTelemetryExportOptions {
  /** Attributes added to every data point, e.g. `{ dispatcher: 'orders' }` to tell dispatchers apart. Default none. */
  attributes?: OpenTelemetryAttributes;
  /** Prefix of the instrument names. Default `'keyed_dispatch'`. */
  prefix?: string;
}

/**
 * Publishes a `DispatchMetrics` through an OpenTelemetry `Meter` (from `@opentelemetry/api`, an optional
 * peer dependency). Counters and gauges are read from one `read()` per collection, so an exporter that
 * collects every 10 s costs one read every 10 s; handler durations are recorded into an OpenTelemetry
 * histogram as they are timed (one handler in `sampleEvery`). Returns the function that stops publishing.
 *
 * Instruments (with the default prefix; `lane` and `key` attributes where noted):
 * `keyed_dispatch.in_flight`, `.window`, `.live_mailboxes`, `.overflow` (gauges, {message} / {mailbox});
 * `keyed_dispatch.messages.admitted`, `.settled`, `.failed` (counters); `keyed_dispatch.key.backlog`
 * (gauge per hot key, `key`); `keyed_dispatch.lane.ready`, `.pinned` (gauges, `lane`);
 * `keyed_dispatch.lane.busy_time` (counter, s, `lane`); `keyed_dispatch.long_turns` (counter);
 * `keyed_dispatch.transport.faults` (counter, `operation`: fetch, commit, heartbeat, connection);
 * `keyed_dispatch.handler.duration` (histogram, s).
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
  optionsObject('exportToOpenTelemetry', options, ['attributes', 'prefix'] satisfies Array<
    keyof OpenTelemetryExportOptions
  >);
  // Typed structurally in the signature (the API is an optional peer); it is an OpenTelemetry Meter.
  const meter = meterLike as unknown as Meter;
  const prefix = options.prefix ?? 'keyed_dispatch';
  const base = options.attributes ?? {};
  const gauge = (name: string, description: string, unit: string) =>
    meter.createObservableGauge(`${prefix}.${name}`, { description, unit });
  const counter = (name: string, description: string, unit: string) =>
    meter.createObservableCounter(`${prefix}.${name}`, { description, unit });

  const inFlight = gauge('in_flight', 'Admitted messages whose handler has not finished', '{message}');
  const window = gauge('window', 'The most messages in flight at once (maxInFlight)', '{message}');
  const liveMailboxes = gauge('live_mailboxes', 'Keys with unfinished messages', '{mailbox}');
  const overflow = gauge('overflow', 'Messages of a plain source waiting outside the window', '{message}');
  const admitted = counter('messages.admitted', 'Messages taken in', '{message}');
  const settled = counter('messages.settled', 'Messages whose handler completed', '{message}');
  const failed = counter('messages.failed', 'Messages whose handler errored', '{message}');
  const backlog = gauge('key.backlog', 'Unfinished messages of the hottest keys', '{message}');
  const ready = gauge('lane.ready', 'Runnables waiting on a lane', '{runnable}');
  const pinned = gauge('lane.pinned', 'Live mailboxes pinned to a lane', '{mailbox}');
  const busy = counter('lane.busy_time', 'Estimated time a lane spent running', 's');
  const longTurns = counter('long_turns', 'Synchronous lane runs longer than longTurnMs', '{turn}');
  const transportFaults = counter(
    'transport.faults',
    'Transport failures the receiver survived and retried, by operation',
    '{fault}',
  );
  const observables: OtelObservable[] = [
    inFlight,
    window,
    liveMailboxes,
    overflow,
    admitted,
    settled,
    failed,
    backlog,
    ready,
    pinned,
    busy,
    longTurns,
    transportFaults,
  ];

  const collect = (result: BatchObservableResult) => {
    const s = metrics.read();
    result.observe(inFlight, s.inFlight, base);
    result.observe(window, s.maxInFlight, base);
    result.observe(liveMailboxes, s.liveMailboxes, base);
    result.observe(overflow, s.overflow, base);
    result.observe(admitted, s.admitted, base);
    result.observe(settled, s.settled, base);
    result.observe(failed, s.failed, base);
    for (const hot of backlogsByKeyText(s.hotKeys))
      result.observe(backlog, hot.backlog, { ...base, key: hot.key });
    for (const lane of s.lanes) {
      const at = { ...base, lane: lane.index };
      result.observe(ready, lane.ready, at);
      result.observe(pinned, lane.pinned, at);
      result.observe(busy, lane.busyMs / 1000, at);
    }
    result.observe(longTurns, s.longTurns.count, base);
    for (const [operation, n] of Object.entries(s.transportFaults)) {
      result.observe(transportFaults, n, { ...base, operation });
    }
  };
  meter.addBatchObservableCallback(collect, observables);

  const duration: Histogram = meter.createHistogram(`${prefix}.handler.duration`, {
    description: 'Handler duration from start to completion (one handler in sampleEvery is timed)',
    unit: 's',
  });
  const stopDurations = metrics.onHandlerDuration((ms) => duration.record(ms / 1000, base));

  return () => {
    meter.removeBatchObservableCallback(collect, observables);
    stopDurations();
  };
}

export { traceHeaders } from './trace-headers';
export { type TracedMessage, type TracingOptions, traced, tracedHandler } from './tracing';
export { jetStreamTracing, kafkaTracing, redisTracing } from './transports';
