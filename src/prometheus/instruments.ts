import type { MetricsSnapshot } from '../metrics';
import type { ExecutorLanes } from '../metrics/executor-lanes';
import { integerOption } from '../validate';
import { backlogsByKeyText } from './key-labels';

/** One value of an instrument; `label` is the value of the instrument's own label (`key`, `lane`, …), if it has one. */
export interface InstrumentSample {
  readonly label?: string;
  /** The values of the instrument's own `labels`, for an instrument with several; absent where there is none. */
  readonly labels?: Readonly<Record<string, string | number>>;
  readonly value: number;
}

/** What an export lets through, per dispatcher. */
export interface ExportLimits {
  /** Hot keys labelled `key` (the hottest first); 0: none. */
  readonly hotKeyLabels: number;
}

/**
 * The `hotKeyLabels` option of the exports: 0 by default, since each key that ever reaches the top is a
 * series of its own that Prometheus keeps; at most 100.
 */
export function hotKeyLabelsOption(owner: string, value: unknown): number {
  return integerOption(owner, 'hotKeyLabels', value, 0, 0, 100);
}

interface Described {
  /**
   * The OpenTelemetry name after the prefix and its `.`. The Prometheus name is the one an OpenTelemetry
   * Prometheus exporter writes (`prometheusName`).
   */
  readonly name: string;
  readonly type: 'gauge' | 'counter';
  /** UCUM unit: `s`, or a `{message}`-style annotation. */
  readonly unit: string;
  readonly help: string;
  /** The instrument's own label, if any; its values are bounded (the hot keys' only up to `hotKeyLabels`). */
  readonly label?: 'key' | 'lane' | 'operation' | 'outcome';
  /** The instrument's own labels where it has several (`transport.lag`); bounded as `label`. */
  readonly labels?: readonly string[];
}

/** A family with a series per dispatcher, labelled with the export's labels (e.g. `dispatcher`). */
export interface DispatcherInstrument extends Described {
  readonly per: 'dispatcher';
  samples(snapshot: MetricsSnapshot, limits: ExportLimits): InstrumentSample[];
}

/**
 * A family with a series per executor (labelled `executor`), listed once however many dispatchers
 * share the executor, so that `sum()` counts it once.
 */
export interface ExecutorInstrument extends Described {
  readonly per: 'executor';
  samples(executor: ExecutorLanes): InstrumentSample[];
}

export type Instrument = DispatcherInstrument | ExecutorInstrument;

/** The label of the executor instruments' series. */
export const EXECUTOR_LABEL = 'executor';

const one = (value: number): InstrumentSample[] => [{ value }];
const perLane = (e: ExecutorLanes, value: (lane: ExecutorLanes['lanes'][number]) => number) =>
  e.lanes.map((lane) => ({ label: String(lane.index), value: value(lane) }));

/**
 * Everything but the handler-duration histogram, which is fed as handlers are timed. A new family is
 * one entry here: both Prometheus exports and the OpenTelemetry export list it.
 */
export const INSTRUMENTS: readonly Instrument[] = [
  {
    per: 'dispatcher',
    name: 'in_flight',
    type: 'gauge',
    unit: '{message}',
    help: 'Admitted messages whose handler has not finished',
    samples: (s) => one(s.inFlight),
  },
  {
    per: 'dispatcher',
    name: 'max_in_flight',
    type: 'gauge',
    unit: '{message}',
    help: 'The window: the most messages in flight at once (the maxInFlight option)',
    samples: (s) => one(s.maxInFlight),
  },
  {
    per: 'dispatcher',
    name: 'live_mailboxes',
    type: 'gauge',
    unit: '{mailbox}',
    help: 'Keys with unfinished messages',
    samples: (s) => one(s.liveMailboxes),
  },
  {
    per: 'dispatcher',
    name: 'overflow',
    type: 'gauge',
    unit: '{message}',
    help: 'Messages of a plain source waiting outside the window',
    samples: (s) => one(s.overflow),
  },
  {
    per: 'dispatcher',
    name: 'messages.admitted',
    type: 'counter',
    unit: '{message}',
    help: 'Messages taken in',
    samples: (s) => one(s.admitted),
  },
  {
    per: 'dispatcher',
    name: 'messages.settled',
    type: 'counter',
    unit: '{message}',
    help: 'Messages settled, by outcome: handled, dead_lettered (the failure policy dead-lettered them) or failed',
    label: 'outcome',
    samples: (s) => [
      { label: 'handled', value: s.settled },
      { label: 'dead_lettered', value: s.deadLettered },
      { label: 'failed', value: s.failed - s.deadLettered },
    ],
  },
  {
    per: 'dispatcher',
    name: 'failed_attempts',
    type: 'counter',
    unit: '{attempt}',
    help: 'Handler attempts that failed, retried or not',
    samples: (s) => one(s.failedAttempts),
  },
  {
    per: 'dispatcher',
    name: 'hottest_key.backlog',
    type: 'gauge',
    unit: '{message}',
    help: 'Unfinished messages of the key with the most',
    samples: (s) => one(s.hotKeys[0]?.backlog ?? 0),
  },
  {
    per: 'dispatcher',
    name: 'key.backlog',
    type: 'gauge',
    unit: '{message}',
    help: 'Unfinished messages of the hottest keys (up to hotKeyLabels of them; none by default)',
    label: 'key',
    samples: (s, limits) =>
      backlogsByKeyText(s.hotKeys.slice(0, limits.hotKeyLabels)).map(({ key, backlog }) => ({
        label: key,
        value: backlog,
      })),
  },
  {
    per: 'dispatcher',
    name: 'long_turns',
    type: 'counter',
    unit: '{turn}',
    help: 'Synchronous lane runs longer than longTurnMs',
    samples: (s) => one(s.longTurns.count),
  },
  {
    per: 'dispatcher',
    name: 'transport.faults',
    type: 'counter',
    unit: '{fault}',
    help: 'Transport failures the receiver survived and retried, by operation',
    label: 'operation',
    samples: (s) =>
      Object.entries(s.transportFaults).map(([operation, value]) => ({ label: operation, value })),
  },
  {
    per: 'dispatcher',
    name: 'transport.lag',
    type: 'gauge',
    unit: '{message}',
    help: 'Messages of the transport this consumer has not finished, per partition, stream or consumer',
    // Bounded by the receiver's assignment: never grows with keys or messages.
    labels: ['transport', 'source', 'partition', 'consumer'],
    samples: (s) =>
      s.transportLag.map((l) => ({
        labels: {
          transport: l.transport,
          source: l.source,
          ...(l.partition === null ? {} : { partition: l.partition }),
          ...(l.consumer === null ? {} : { consumer: l.consumer }),
        },
        value: l.lag,
      })),
  },
  {
    per: 'executor',
    name: 'lane.ready',
    type: 'gauge',
    unit: '{runnable}',
    help: 'Runnables waiting on a lane',
    label: 'lane',
    samples: (e) => perLane(e, (lane) => lane.ready),
  },
  {
    per: 'executor',
    name: 'lane.pinned',
    type: 'gauge',
    unit: '{mailbox}',
    help: 'Live mailboxes pinned to a lane, of every dispatcher on its executor',
    label: 'lane',
    samples: (e) => perLane(e, (lane) => lane.pinned),
  },
  {
    per: 'executor',
    name: 'lane.busy_time',
    type: 'counter',
    unit: 's',
    help: 'Estimated time a lane spent running while measured',
    label: 'lane',
    samples: (e) => perLane(e, (lane) => lane.busyMs / 1000),
  },
];

/** The names of `instrument`'s own labels: its `label`, or its `labels`. */
export function ownLabelNames(instrument: Described): readonly string[] {
  return instrument.label === undefined ? (instrument.labels ?? []) : [instrument.label];
}

/** The values of `sample`'s own labels, as an OpenTelemetry export writes them: a label without a value is left out. */
export function ownLabels(
  instrument: Described,
  sample: InstrumentSample,
): Readonly<Record<string, string | number>> {
  return instrument.label === undefined ? (sample.labels ?? {}) : { [instrument.label]: sample.label ?? '' };
}

/**
 * The Prometheus labels of one sample: the series' `base` labels, then the instrument's own, each of
 * them present (`''` where the sample has no value: Prometheus reads it as absent).
 */
export function labelsOf(
  instrument: Described,
  base: Readonly<Record<string, string>>,
  sample: InstrumentSample,
): Record<string, string> {
  const own = ownLabels(instrument, sample);
  const labels: Record<string, string> = { ...base };
  for (const name of ownLabelNames(instrument)) labels[name] = String(own[name] ?? '');
  return labels;
}

/**
 * The Prometheus name of an instrument as an OpenTelemetry Prometheus exporter writes it: `.` becomes
 * `_`, a unit in seconds adds `_seconds`, a counter adds `_total`; `{message}`-style units add nothing.
 */
export function prometheusName(prefix: string, instrument: Described): string {
  const seconds = instrument.unit === 's' ? '_seconds' : '';
  const total = instrument.type === 'counter' ? '_total' : '';
  return `${prefix}_${instrument.name.replace(/\./g, '_')}${seconds}${total}`;
}

/** The handler-duration histogram: its name (OpenTelemetry's, after the prefix), its help and its bucket bounds in seconds. */
export const DURATION = {
  name: 'handler.duration',
  prometheusName: 'handler_duration_seconds',
  help: 'Handler duration from start to completion (one handler in sampleEvery is timed)',
  buckets: [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
  ] as readonly number[],
} as const;

/** The default prefix, as the OpenTelemetry export's. */
export const DEFAULT_PREFIX = 'keyed_dispatch';
