import type { EventLoopLanes } from '../engine/event-loop-lanes';
import type { LaneLoop } from '../engine/lane-loop';
import type { Handle, PolicyWrap } from '../failure-policy';
import type { MessageObserver } from '../internal/message-observer';
import { sharedSlot } from '../internal/shared-slot';
import type { HandlerTimer } from '../stats';
import { describe } from '../validate';
import type { Dispatcher, Router } from './router';

/**
 * The lanes an executor brings, as the rest of the library sees them: the one seam between the
 * dispatcher and the kind of lanes (event-loop lanes of a `KeyedExecutor`, worker threads of a
 * `ThreadExecutor`). Each executor attaches its own; nothing outside the executors asks which kind
 * it is.
 */
export interface LaneBackend {
  /** The executor's public name, for errors. */
  readonly name: 'KeyedExecutor' | 'ThreadExecutor';
  /** True for the process-wide shared executor, which nobody closes. */
  readonly shared: boolean;
  /** Whether the executor was closed: it runs nothing more. */
  readonly closed: boolean;
  /**
   * The lanes on this thread where the handlers run, which metrics measure (busy time, long turns);
   * null when the handlers run in other threads.
   */
  readonly local: EventLoopLanes | null;
  /** The router of one dispatcher (or of the batch router in front of it) on these lanes. */
  router<M, K, R>(dispatcher: Dispatcher<M, K, R>, work: HandlerSetup<M, K, R>): Router<M, K>;
  /**
   * The lane loop of this thread, where the dispatcher admits and completions come back: its
   * `batchAdmissions`/`flushAdmissions` defer turns so that a batch of admissions (a runtime's start, a receiver's
   * delivery) lands before any runs.
   */
  readonly loop: LaneLoop;
  /**
   * Reports handler runs that hold their lane `thresholdMs` or longer (the long turns metrics count);
   * returns the function that stops it.
   */
  watchLongTurns(thresholdMs: number, listener: (laneIndex: number, durationMs: number) => void): () => void;
}

/** What a router runs for the items (messages, or per-key batches) it is handed. */
export interface HandlerSetup<M, K, R> {
  /** The handler, called on this thread (on thread lanes it is never called: `threadHandler` runs). */
  readonly handle: Handle<M, K, R>;
  /** The `threadHandler` the threads run, on thread lanes (the options matched it to the executor). */
  readonly threadHandler: unknown;
  /** The failure policy to put around the handler, where it runs. */
  readonly policy: PolicyWrap<M, K> | undefined;
  /** Items one key runs in one turn while they complete synchronously. */
  readonly throughput: number;
  /** Unfinished items one key may hold in the router; the dispatcher parks the rest. */
  readonly maxPerKey: number;
  /** Times handlers run on this thread when metrics ask for it; null otherwise. */
  readonly timer: HandlerTimer | null;
  /** How many messages an item counts for in a turn (a batch: its length); undefined: one each. */
  readonly sizeOf: ((item: M) => number) | undefined;
  /** Told about single messages when `traced` installed it (thread lanes ask it for waits); else undefined. */
  readonly observer?: MessageObserver<M>;
}

/**
 * The lanes of each executor, where a dispatcher of another copy of the library (the CommonJS build
 * beside the ESM one) finds them too.
 */
const slot = sharedSlot<LaneBackend>('executor.lanes');

/** Gives `executor` its lanes (not enumerable: the public object shows none of it). */
export function attachLanes(executor: object, lanes: LaneBackend): void {
  slot.attach(executor, lanes);
}

/** The lanes of `executor`, of this copy of the library or of another; undefined for anything else. */
export function lanesOf(executor: unknown): LaneBackend | undefined {
  return slot.of(executor);
}

/** The lanes of the `executor` option; a `TypeError` naming `owner` when it is no executor. */
export function lanesOfOption(owner: string, executor: unknown): LaneBackend {
  const lanes = slot.of(executor);
  if (lanes === undefined) {
    throw new TypeError(
      `${owner}: expected \`executor\` to be a KeyedExecutor or a ThreadExecutor, got ${describe(executor)}`,
    );
  }
  return lanes;
}
