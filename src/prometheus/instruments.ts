import type { MetricsSnapshot } from '../metrics';
import { backlogsByKeyText } from './key-labels';
import { LAG_INSTRUMENT } from './lag-instrument';

/** One value of an instrument; `label` is the value of the instrument's own label (`key`, `lane`, `operation`), if it has one. */
export interface InstrumentSample {
  readonly label?: string;
  /** The values of the instrument's own `labels`, for an instrument with several. */
  readonly labels?: Readonly<Record<string, string>>;
  readonly value: number;
}

/**
 * A Prometheus metric family read from a `MetricsSnapshot`. Names are the OpenTelemetry export's
 * (`src/otel/index.ts`) as an OpenTelemetry Prometheus exporter writes them: `.` becomes `_`, a unit
 * in seconds adds `_seconds`, a counter adds `_total`; `{message}`-style units add nothing.
 */
export interface Instrument {
  /** The name after the prefix and its `_`. */
  readonly name: string;
  readonly type: 'gauge' | 'counter';
  readonly help: string;
  /**
   * The instrument's own label, if any: `key` for the hot keys (only the current top N), `lane` for
   * lanes, `operation` for what a transport was doing when it failed.
   */
  readonly label?: 'key' | 'lane' | 'operation';
  /** The instrument's own labels where it has several (`transport_lag`); each sample gives their values. */
  readonly labels?: readonly string[];
  samples(snapshot: MetricsSnapshot): InstrumentSample[];
}

/** The label names of `instrument`'s samples: the dispatcher's `base` ones, then its own. */
export function labelNamesOf(instrument: Instrument, base: readonly string[]): string[] {
  if (instrument.label !== undefined) return [...base, instrument.label];
  return [...base, ...(instrument.labels ?? [])];
}

/** The labels of one sample of `instrument`: the dispatcher's `base` ones, then its own. */
export function labelsOf(
  instrument: Instrument,
  base: Readonly<Record<string, string>>,
  sample: InstrumentSample,
): Readonly<Record<string, string>> {
  if (instrument.label !== undefined) return { ...base, [instrument.label]: sample.label ?? '' };
  return sample.labels === undefined ? base : { ...base, ...sample.labels };
}

const one = (value: number): InstrumentSample[] => [{ value }];
const perLane = (s: MetricsSnapshot, value: (lane: MetricsSnapshot['lanes'][number]) => number) =>
  s.lanes.map((lane) => ({ label: String(lane.index), value: value(lane) }));

/** Everything but the handler-duration histogram, which is fed as handlers are timed. */
export const INSTRUMENTS: readonly Instrument[] = [
  {
    name: 'in_flight',
    type: 'gauge',
    help: 'Admitted messages whose handler has not finished',
    samples: (s) => one(s.inFlight),
  },
  {
    name: 'window',
    type: 'gauge',
    help: 'The most messages in flight at once (maxInFlight)',
    samples: (s) => one(s.maxInFlight),
  },
  {
    name: 'live_mailboxes',
    type: 'gauge',
    help: 'Keys with unfinished messages',
    samples: (s) => one(s.liveMailboxes),
  },
  {
    name: 'overflow',
    type: 'gauge',
    help: 'Messages of a plain source waiting outside the window',
    samples: (s) => one(s.overflow),
  },
  {
    name: 'messages_admitted_total',
    type: 'counter',
    help: 'Messages taken in',
    samples: (s) => one(s.admitted),
  },
  {
    name: 'messages_settled_total',
    type: 'counter',
    help: 'Messages whose handler completed',
    samples: (s) => one(s.settled),
  },
  {
    name: 'messages_failed_total',
    type: 'counter',
    help: 'Messages whose handler errored',
    samples: (s) => one(s.failed),
  },
  {
    name: 'key_backlog',
    type: 'gauge',
    help: 'Unfinished messages of the hottest keys',
    label: 'key',
    samples: (s) => backlogsByKeyText(s.hotKeys).map(({ key, backlog }) => ({ label: key, value: backlog })),
  },
  {
    name: 'lane_ready',
    type: 'gauge',
    help: 'Runnables waiting on a lane',
    label: 'lane',
    samples: (s) => perLane(s, (lane) => lane.ready),
  },
  {
    name: 'lane_pinned',
    type: 'gauge',
    help: 'Live mailboxes pinned to a lane',
    label: 'lane',
    samples: (s) => perLane(s, (lane) => lane.pinned),
  },
  {
    name: 'lane_busy_time_seconds_total',
    type: 'counter',
    help: 'Estimated time a lane spent running',
    label: 'lane',
    samples: (s) => perLane(s, (lane) => lane.busyMs / 1000),
  },
  {
    name: 'long_turns_total',
    type: 'counter',
    help: 'Synchronous lane runs longer than longTurnMs',
    samples: (s) => one(s.longTurns.count),
  },
  {
    name: 'transport_faults_total',
    type: 'counter',
    help: 'Transport failures the receiver survived and retried, by operation',
    label: 'operation',
    samples: (s) =>
      Object.entries(s.transportFaults).map(([operation, value]) => ({ label: operation, value })),
  },
  LAG_INSTRUMENT,
];

/** The handler-duration histogram: its name after the prefix, its help and its bucket bounds in seconds. */
export const DURATION = {
  name: 'handler_duration_seconds',
  help: 'Handler duration from start to completion (one handler in sampleEvery is timed)',
  buckets: [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
  ] as readonly number[],
} as const;

/** The default prefix, as the OpenTelemetry export's. */
export const DEFAULT_PREFIX = 'keyed_dispatch';
