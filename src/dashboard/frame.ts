import { errorTextOf, textOf } from '../internal/text-of';
import type { MetricsSnapshot } from '../metrics';
import type { MessageFailure, TransportFaultCounts, TransportFaultSeen } from '../stats';
import type { TransportLag } from '../transport-lag';
import { stallThreshold } from './stall';

/** Keys longer than this are cut for the page (the full key stays in `read()`); the page shows them as text. */
export const MAX_KEY_LENGTH = 200;
/** Error texts longer than this are cut for the page (a stack or a whole payload in a message). */
export const MAX_ERROR_LENGTH = 500;

/** The last message settled as failed or dead-lettered (`DispatchSnapshot.lastFailure`), as text. */
export interface ErrorShown {
  readonly text: string;
  /** Its key; null when the key selector failed. */
  readonly key: string | null;
  /** Where it came from, when its receiver says. */
  readonly source: string | null;
  readonly outcome: MessageFailure['outcome'];
  /** When, in ms since the epoch. */
  readonly time: number;
}

/** The transport panel's row of the receiver's faults (counted per receiver), named once it reported one. */
export interface TransportRow {
  readonly source: string;
  readonly faults: TransportFaultCounts;
  /** The last fault (`operation: error`) and when, in ms since the epoch; null before the first. */
  readonly lastFault: { readonly text: string; readonly time: number } | null;
}

/** What the page gets for one dispatcher each period, as JSON. Keys are text (`textOf`), cut at `MAX_KEY_LENGTH`. */
export interface DispatcherFrame {
  readonly name: string;
  /** Wall-clock time of the snapshot, in ms since the epoch: the charts' x axis. */
  readonly time: number;
  /** Rates over the period before the snapshot. */
  readonly admittedPerSecond: number;
  readonly settledPerSecond: number;
  readonly failedPerSecond: number;
  /** Handler duration percentiles over the period, of the timed handlers (`timed`; 0 when none). */
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly timed: number;
  readonly inFlight: number;
  readonly maxInFlight: number;
  /** In flight above this, intake has stopped (see `stallThreshold`). */
  readonly stallThreshold: number;
  readonly liveMailboxes: number;
  readonly overflow: number;
  readonly admitted: number;
  readonly settled: number;
  /** Settled as failed: a failure policy gave up on them with no dead letter (`failed − deadLettered`). */
  readonly failed: number;
  readonly deadLettered: number;
  /** The oldest message in flight (`MetricsSnapshot.oldestUnfinished`). */
  readonly oldestUnfinished: { readonly ageMs: number; readonly atLeast: boolean } | null;
  readonly lastError: ErrorShown | null;
  /** The receiver's faults for the transport panel, beside `transportLag`: none before the first fault. */
  readonly transport: readonly TransportRow[];
  readonly longTurns: { readonly count: number; readonly maxMs: number };
  readonly hotKeys: ReadonlyArray<{
    readonly key: string;
    readonly backlog: number;
    readonly parked: number;
  }>;
  readonly lanes: ReadonlyArray<{
    readonly index: number;
    readonly ready: number;
    readonly pinned: number;
    readonly busyRatio: number;
  }>;
  /** Messages waiting outside the window (their key at its share), and the most that may. */
  readonly parked: number;
  readonly maxParked: number;
  /** The key holding the dispatcher's intake (`MetricsSnapshot.heldBy`), else null. */
  readonly heldBy: { readonly key: string; readonly backlog: number; readonly parked: number } | null;
  /** Transport failures its receiver survived, by operation (`MetricsSnapshot.transportFaults`). */
  readonly transportFaults: TransportFaultCounts;
  /** How far the consumer is behind its transport, per partition or stream (`MetricsSnapshot.transportLag`). */
  readonly transportLag: readonly TransportLag[];
}

/**
 * One point of a dispatcher's charts: time, admitted/s, settled/s, failed/s, p50 ms, p99 ms; the
 * percentiles are null when no handler was timed in the period (a gap, not a zero).
 */
export type ChartPoint = [number, number, number, number, number | null, number | null];

/** What the page gets when it connects: every dispatcher's name, the charts' recent history and the latest frames. */
export interface Hello {
  readonly names: readonly string[];
  readonly periodMs: number;
  /** Points kept per dispatcher (the charts' span). */
  readonly historyLength: number;
  readonly history: Readonly<Record<string, readonly ChartPoint[]>>;
  readonly frames: readonly DispatcherFrame[];
}

export function frameOf(
  name: string,
  s: MetricsSnapshot,
  failedPerSecond: number,
  time: number,
): DispatcherFrame {
  const held = s.heldBy;
  return {
    name,
    time,
    admittedPerSecond: s.admittedPerSecond,
    settledPerSecond: s.settledPerSecond,
    failedPerSecond,
    p50Ms: s.windowLatency.p50Ms,
    p99Ms: s.windowLatency.p99Ms,
    timed: s.windowLatency.count,
    inFlight: s.inFlight,
    maxInFlight: s.maxInFlight,
    stallThreshold: stallThreshold(s.maxInFlight),
    liveMailboxes: s.liveMailboxes,
    overflow: s.overflow,
    admitted: s.admitted,
    settled: s.settled,
    failed: s.failed - s.deadLettered,
    deadLettered: s.deadLettered,
    oldestUnfinished: s.oldestUnfinished,
    lastError: s.lastFailure === null ? null : errorShown(s.lastFailure),
    transport: transportRows(s.transportFaults, s.lastTransportFault),
    longTurns: s.longTurns,
    hotKeys: s.hotKeys.map((hot) => ({ key: keyText(hot.key), backlog: hot.backlog, parked: hot.parked })),
    lanes: s.lanes.map((lane) => ({
      index: lane.index,
      ready: lane.ready,
      pinned: lane.pinned,
      busyRatio: lane.busyRatio,
    })),
    parked: s.parked,
    maxParked: s.maxParked,
    heldBy: held === null ? null : { key: keyText(held.key), backlog: held.backlog, parked: held.parked },
    transportFaults: { ...s.transportFaults },
    transportLag: s.transportLag.map((lag) => ({ ...lag })),
  };
}

export function pointOf(frame: DispatcherFrame): ChartPoint {
  return [
    frame.time,
    frame.admittedPerSecond,
    frame.settledPerSecond,
    frame.failedPerSecond,
    frame.timed === 0 ? null : frame.p50Ms,
    frame.timed === 0 ? null : frame.p99Ms,
  ];
}

function errorShown(failure: MessageFailure): ErrorShown {
  return {
    text: cut(errorTextOf(failure.error), MAX_ERROR_LENGTH),
    key: failure.key === undefined ? null : keyText(failure.key),
    source: failure.source ?? null,
    outcome: failure.outcome,
    time: failure.time,
  };
}

function transportRows(faults: TransportFaultCounts, last: TransportFaultSeen | null): TransportRow[] {
  if (last === null) return [];
  const text = `${last.operation}: ${cut(errorTextOf(last.error), MAX_ERROR_LENGTH)}`;
  return [{ source: last.receiver, faults: { ...faults }, lastFault: { text, time: last.time } }];
}

function keyText(key: unknown): string {
  return cut(textOf(key), MAX_KEY_LENGTH);
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
