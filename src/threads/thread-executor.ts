import { availableParallelism } from 'node:os';
import type { AsyncClosable } from '../async-dispose';
import { attachLanes } from '../dispatch/lanes';
import { threadLoop } from '../engine/lane-loop';
import { functionOption, integerOption, MAX_WORKERS, optionsObject } from '../validate';
import { resourceLimitsOf, type ThreadResourceLimits } from './resource-limits';
import { ThreadLanes } from './thread-lanes';
import { ThreadRouter } from './thread-router';

/** Declared with its validation; exported from here with the executor whose option it is. */
export type { ThreadResourceLimits } from './resource-limits';

/** Options of `ThreadExecutor`. */
export interface ThreadExecutorOptions {
  /** Worker threads shared by every dispatcher given this executor. Integer from 1 to 1,024. Default: available processors. */
  workers?: number;
  /**
   * V8 heap limits of each thread (`worker_threads` `resourceLimits`); a thread that exceeds them dies and
   * is replaced. Limits too small for a thread to start are refused (see each field). Default: Node's.
   */
  resourceLimits?: ThreadResourceLimits;
  /**
   * Times each thread lane may have its thread replaced within any minute. Past it the lane waits until
   * the minute allows its next thread, its messages with it (none fails for it: a message that keeps
   * crashing its thread is failed on its own, see the class). Each lane has its own budget, so a crash
   * loop on one lane never costs another lane its replacement. Integer ≥ 0. Default 5.
   */
  maxRespawnsPerMinute?: number;
  /**
   * Told of every handler run that holds its thread `longTurnMs` or longer — a handler blocking its
   * thread, and every key pinned there with it. Seen from the main thread (a blocked thread cannot
   * report itself): called once per run as it reaches the threshold, with the lane's index and how long
   * the run has held its thread so far (it may still be running). Default: none.
   */
  onLongTurn?: (laneIndex: number, durationMs: number) => void;
  /** Threshold of `onLongTurn`, in milliseconds. Integer ≥ 1. Default 50. */
  longTurnMs?: number;
  /**
   * Longest a thread handler may hold its thread in one call, in milliseconds. Past it the thread is
   * terminated and replaced: that message fails with `ThreadBlockedError`, to its failure policy like a
   * handler's error, and every other message the thread held runs again on the replacement, no attempt
   * counted. Only the handler's call is bounded (what blocks the thread), not the time an async handler
   * waits. Seen from the main thread, within about a quarter of the bound. Integer ≥ 1. Default: none —
   * thread lanes are for long CPU work whose legitimate length only the application knows, and a
   * terminated thread runs its other messages again; set it to what a run must never exceed.
   */
  maxBlockingMs?: number;
}

let shared: ThreadExecutor | undefined;
/** True while the shared executor is being built: its lanes stop their threads whenever idle. */
let buildingShared = false;

/**
 * Thread lanes: N `worker_threads` shared by every dispatcher given this executor, for CPU-bound
 * handlers. Semantics are those of event-loop lanes: each key's mailbox lives in one thread while it
 * has unfinished messages, and inside a thread mailboxes take fair turns and async handlers release
 * the thread (the same engine runs there). The main thread keeps the window, the key → thread pinning,
 * settlement and output. A message that has not started can be withdrawn at once (discard,
 * unsubscribe, close): no thread starts it afterwards.
 *
 * Placement of a new key: an idle thread (no unfinished messages), scanning round-robin, else the
 * least loaded thread (fewest unfinished messages, then fewest pinned keys): a thread's load is known on
 * the main thread, and an idle thread starts at once. (Event-loop lanes share one thread, so they are
 * taken in turn instead.)
 *
 * A thread that dies (`process.exit`, an uncaught error, `resourceLimits`) is replaced at once. A crash
 * is blamed on a message that was running, never on its neighbours: the messages that were running on
 * it are suspects and run again one at a time on the replacement (each alone for twice as long as it
 * had run when the crash cut it short: one second at least, a minute at most),
 * and the one that crashes it alone is blamed — its run fails with `ThreadCrashLoopError`, to its failure policy like a handler's error.
 * Every other message it held runs again, in the order it was first posted, no attempt counted — so
 * per-key order holds, and delivery for those that were running is at-least-once (values they had
 * already emitted may be emitted again). Keys on other threads are not touched. Beyond
 * `maxRespawnsPerMinute` (per lane), the lane waits for its budget before its next thread; nothing
 * fails for it. Transferred buffers move to a thread only when it starts their message: a message that
 * was waiting there runs again with them; one that was running cannot (the only one running is blamed,
 * `ThreadCrashLoopError`; one of several fails with `ThreadExitedError`). A value or error that cannot be cloned fails its own message only.
 *
 * Threads start with the first message and hold the process open only while they hold unfinished
 * messages. `close()` cancels (see there). `ThreadExecutor.shared` also stops its threads whenever no
 * dispatcher is running on it.
 */
export class ThreadExecutor implements AsyncClosable {
  /** The process-wide thread executor used for a thread handler given no executor. Never keeps the process alive; cannot be closed. */
  static get shared(): ThreadExecutor {
    if (shared === undefined) {
      buildingShared = true;
      try {
        shared = new ThreadExecutor();
      } finally {
        buildingShared = false;
      }
    }
    return shared;
  }

  /** Number of thread lanes. */
  readonly workers: number;
  readonly #lanes: ThreadLanes;

  constructor(options: ThreadExecutorOptions = {}) {
    optionsObject('ThreadExecutor', options, [
      'workers',
      'resourceLimits',
      'maxRespawnsPerMinute',
      'onLongTurn',
      'longTurnMs',
      'maxBlockingMs',
    ] satisfies Array<keyof ThreadExecutorOptions>);
    this.workers = integerOption(
      'ThreadExecutor',
      'workers',
      options.workers,
      availableParallelism(),
      1,
      MAX_WORKERS,
    );
    const maxRespawnsPerMinute = integerOption(
      'ThreadExecutor',
      'maxRespawnsPerMinute',
      options.maxRespawnsPerMinute,
      5,
      0,
    );
    const maxBlockingMs =
      options.maxBlockingMs === undefined
        ? undefined
        : integerOption('ThreadExecutor', 'maxBlockingMs', options.maxBlockingMs, 0, 1);
    const longTurnMs = integerOption('ThreadExecutor', 'longTurnMs', options.longTurnMs, 50, 1);
    const onLongTurn =
      options.onLongTurn === undefined
        ? undefined
        : functionOption('ThreadExecutor', 'onLongTurn', options.onLongTurn);
    const lanes = new ThreadLanes(
      this.workers,
      resourceLimitsOf(options.resourceLimits),
      maxRespawnsPerMinute,
      buildingShared,
      maxBlockingMs,
    );
    this.#lanes = lanes;
    if (onLongTurn !== undefined) lanes.watchLongTurns(longTurnMs, onLongTurn);
    // The main thread admits and settles; handlers run in the threads, where metrics do not measure.
    attachLanes(this, {
      name: 'ThreadExecutor',
      shared: buildingShared,
      get closed() {
        return lanes.closed;
      },
      local: null,
      router: (dispatcher, work) => new ThreadRouter(dispatcher, lanes, work),
      loop: threadLoop,
      watchLongTurns: (thresholdMs, listener) => lanes.watchLongTurns(thresholdMs, listener),
    });
  }

  /**
   * Reports handler runs on these threads that hold their thread `thresholdMs` or longer (see the
   * `onLongTurn` option). Returns the function that stops it.
   */
  onLongTurn(thresholdMs: number, listener: (laneIndex: number, durationMs: number) => void): () => void {
    return this.#lanes.watchLongTurns(thresholdMs, listener);
  }

  /** Whether `close()` has been called: a closed executor runs nothing more. */
  get closed(): boolean {
    return this.#lanes.closed;
  }

  /** Threads running now (they start with the first message; a stopped or dead one is not counted). */
  get liveThreads(): number {
    return this.#lanes.liveThreads;
  }

  /** Thread ids of the running threads, by lane (null where none runs): for diagnostics. */
  get threadIds(): ReadonlyArray<number | null> {
    return this.#lanes.threadIds;
  }

  /**
   * Closes the executor by cancelling, not draining: dispatchers still running on it error with
   * `ExecutorClosedError` (their unfinished messages are not settled, so a transport redelivers
   * them; none that had not started starts), the handlers running in the threads are unsubscribed, and
   * the threads are terminated. The promise resolves once every thread has exited. To drain, let your
   * pipelines complete first (await them), then close. No dispatcher can start on a closed executor. The
   * shared executor cannot be closed.
   */
  async close(): Promise<void> {
    if (this === shared)
      throw new Error('ThreadExecutor.shared cannot be closed; it stops its threads whenever it is idle');
    await this.#lanes.close();
  }

  /** `close()`, for `await using executor = new ThreadExecutor()`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
