import type { EventLoopLanes } from '../engine/event-loop-lanes';
import { sharedSlot } from '../internal/shared-slot';

/** One lane of an executor as the exports list it: once per executor, whichever dispatchers share it. */
export interface ExecutorLane {
  readonly index: number;
  /** Runnables waiting on the lane now. */
  readonly ready: number;
  /** Live mailboxes pinned to the lane, of every dispatcher on the executor. */
  readonly pinned: number;
  /** Estimated ms the lane spent running while any `DispatchMetrics` measured it: a running sum. */
  readonly busyMs: number;
}

/** An executor's event-loop lanes now, with the executor's number in the process (`executor` label). */
export interface ExecutorLanes {
  readonly executor: string;
  readonly lanes: readonly ExecutorLane[];
}

/** The lanes a `DispatchMetrics` measures (its last dispatcher's; null on thread lanes or before a start). */
const measured = sharedSlot<() => EventLoopLanes | null>('DispatchMetrics.lanes');
/** Each executor's number, given when an export first meets it; on the lane set, so every copy agrees. */
const numbers = sharedSlot<string>('EventLoopLanes.number');
const COUNT = Symbol.for('keyed-dispatch.executorCount@2');

/** Lets exports find the lanes `metrics` measures (`lanes` reads them now). */
export function exposeLanes(metrics: object, lanes: () => EventLoopLanes | null): void {
  measured.attach(metrics, lanes);
}

/**
 * The executors of `metrics`, each once however many of them share it, in the order first met: lanes
 * belong to the executor, so per dispatcher they would repeat (and add up twice).
 */
export function executorsOf(metrics: Iterable<object>): ExecutorLanes[] {
  const seen = new Set<EventLoopLanes>();
  for (const m of metrics) {
    const lanes = measured.of(m)?.();
    if (lanes != null) seen.add(lanes);
  }
  return [...seen].map((set) => ({
    executor: numberOf(set),
    lanes: set.lanes.map((lane) => ({
      index: lane.index,
      ready: lane.ready.size,
      pinned: lane.pinned,
      busyMs: lane.busyMs,
    })),
  }));
}

function numberOf(set: EventLoopLanes): string {
  const known = numbers.of(set);
  if (known !== undefined) return known;
  const global = globalThis as { [COUNT]?: number };
  const number = String((global[COUNT] = (global[COUNT] ?? 0) + 1));
  numbers.attach(set, number);
  return number;
}
