import { availableParallelism } from 'node:os';
import { attachLanes } from '../dispatch/lanes';
import { threadLoop } from '../engine/lane-loop';
import { integerOption, MAX_WORKERS, optionsObject } from '../validate';
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
   * Times each thread lane may have its thread replaced within any minute. A death beyond that fails
   * the messages the thread held with `ThreadCrashLoopError` instead of running them again, and the
   * lane stays down until the minute has passed. Each lane has its own budget, so a crash loop on one
   * lane never costs another lane its replacement. Integer ≥ 0. Default 5.
   */
  maxRespawnsPerMinute?: number;
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
 * Placement of a new key: a parked thread (no unfinished messages), scanning round-robin, else the
 * least loaded thread (fewest unfinished messages, then fewest pinned keys): a thread's load is known on
 * the main thread, and an idle thread starts at once. (Event-loop lanes share one thread, so they are
 * taken in turn instead.)
 *
 * A thread that dies (`process.exit`, an uncaught error, `resourceLimits`) is replaced at once, and
 * every message it held runs again on the replacement, in the order it was first posted — so per-key
 * order holds, and delivery for those messages is at-least-once (values they had already emitted may
 * be emitted again). Keys on other threads are not touched. Beyond `maxRespawnsPerMinute` (per lane),
 * the held messages fail with `ThreadCrashLoopError` instead (a poison message cannot loop), and so do
 * held messages whose buffers were transferred (`ThreadExitedError`). A value or error that cannot be
 * cloned fails its own message only.
 *
 * Threads start with the first message and hold the process open only while they hold unfinished
 * messages. `close()` cancels (see there). `ThreadExecutor.shared` also stops its threads whenever no
 * dispatcher is running on it.
 */
export class ThreadExecutor {
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
    const lanes = new ThreadLanes(
      this.workers,
      resourceLimitsOf(options.resourceLimits),
      maxRespawnsPerMinute,
      buildingShared,
    );
    this.#lanes = lanes;
    // The main thread admits and settles; handlers run in the threads, where metrics do not measure.
    attachLanes(this, {
      name: 'ThreadExecutor',
      shared: buildingShared,
      get closed() {
        return lanes.closed;
      },
      local: null,
      router: (routed, work) => new ThreadRouter(routed, lanes, work),
      loop: threadLoop,
    });
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
}
