import { availableParallelism } from 'node:os';
import type { SchedulerLike } from 'rxjs';
import type { AsyncClosable } from './async-dispose';
import { EventLoopRouter } from './dispatch/event-loop-router';
import { attachLanes } from './dispatch/lanes';
import { EventLoopLanes } from './engine/event-loop-lanes';
import { threadLoop } from './engine/lane-loop';
import { functionOption, integerOption, MAX_WORKERS, optionsObject } from './validate';

/** Options of `KeyedExecutor`. */
export interface KeyedExecutorOptions {
  /**
   * How many event-loop lanes every dispatcher given this executor shares. They take turns on the one
   * thread that owns them: more lanes give more keys their own FIFO, not more CPU (for that,
   * `ThreadExecutor`, whose `workers` are threads). Integer from 1 to 1,024. Default: available processors.
   * Read back as `executor.lanes.length`.
   */
  lanes?: number;
  /**
   * Told of every synchronous turn on these lanes that runs `longTurnMs` or longer: a handler blocking
   * the event loop (and every other key with it). Move such handlers to thread lanes (`ThreadExecutor`).
   * Called with the lane's index and the turn's duration. One that throws or rejects is no longer called,
   * and a process warning (`KeyedDispatchWarning`) says why. Default: none (turns are not timed).
   */
  onLongTurn?: (laneIndex: number, durationMs: number) => void;
  /** Threshold of `onLongTurn`, in milliseconds. Integer ≥ 1. Default 50. */
  longTurnMs?: number;
}

let shared: KeyedExecutor | undefined;

/**
 * A set of event-loop lanes shared by every dispatcher given it. Each lane has its own FIFO of ready
 * mailboxes; a mailbox is pinned to the lane it got when it was created. These lanes run on the thread
 * that owns them, taking turns, so they give fairness and isolation between keys (an async handler
 * holds no lane), not CPU parallelism: CPU-bound handlers belong on thread lanes (`ThreadExecutor`).
 *
 * Placement of a new mailbox: the lane running right now if nothing else is queued on it (no hand-off
 * at all); else the next lane in a turn shared by every dispatcher on the executor, so that keys spread
 * evenly over the lanes.
 */
export class KeyedExecutor implements AsyncClosable {
  /** The process-wide executor used when `keyedDispatch` is given none. It holds no handle, so it never keeps the process alive. */
  static get shared(): KeyedExecutor {
    shared ??= new KeyedExecutor();
    return shared;
  }

  readonly #lanes: EventLoopLanes;
  /** Stops the `onLongTurn` option's watch (null without it). */
  readonly #stopLongTurns: (() => void) | null = null;

  constructor(options: KeyedExecutorOptions = {}) {
    optionsObject('KeyedExecutor', options, ['lanes', 'onLongTurn', 'longTurnMs'] satisfies Array<
      keyof KeyedExecutorOptions
    >);
    const lanes = new EventLoopLanes(
      integerOption('KeyedExecutor', 'lanes', options.lanes, availableParallelism(), 1, MAX_WORKERS),
    );
    this.#lanes = lanes;
    const executor = this;
    attachLanes(this, {
      name: 'KeyedExecutor',
      get shared() {
        return executor === shared;
      },
      get closed() {
        return lanes.closed;
      },
      local: lanes,
      router: (dispatcher, work) => new EventLoopRouter(dispatcher, lanes, work),
      loop: threadLoop,
      watchLongTurns: (thresholdMs, listener) => lanes.watchLongTurns(thresholdMs, listener),
    });
    const longTurnMs = integerOption('KeyedExecutor', 'longTurnMs', options.longTurnMs, 50, 1);
    if (options.onLongTurn !== undefined) {
      const listener = functionOption('KeyedExecutor', 'onLongTurn', options.onLongTurn);
      this.#stopLongTurns = lanes.watchLongTurns(longTurnMs, listener);
    }
  }

  /**
   * The lanes as RxJS schedulers: lane `i` is the scheduler that handlers pinned to lane `i` see as
   * `ctx.scheduler`. Work scheduled on a lane (`observeOn(executor.lanes[i])`, `lane.schedule(work,
   * delay)`) runs in that lane's FIFO, taking turns with its mailboxes.
   */
  get lanes(): readonly SchedulerLike[] {
    return this.#lanes.lanes;
  }

  /** The lane of this executor whose turn is running now, on this thread; null outside its turns. */
  get currentLane(): SchedulerLike | null {
    return this.#lanes.currentLane;
  }

  /** Whether `close()` has been called: a closed executor runs nothing more. */
  get closed(): boolean {
    return this.#lanes.closed;
  }

  /** Live mailboxes pinned to the lanes, across all dispatchers. */
  get liveMailboxes(): number {
    return this.#lanes.liveMailboxes;
  }

  /**
   * Reports synchronous turns longer than `thresholdMs` on this executor's lanes — a handler blocking
   * the event loop. CPU-bound handlers belong on thread lanes. Returns the function that stops it.
   */
  onLongTurn(thresholdMs: number, listener: (laneIndex: number, durationMs: number) => void): () => void {
    return this.#lanes.watchLongTurns(thresholdMs, listener);
  }

  /**
   * Closes the executor: dispatchers still running on it error with `ExecutorClosedError` (their
   * unfinished messages are not settled), and no dispatcher can start on it afterwards. Stop your
   * dispatchers first to drain them. The shared executor cannot be closed.
   */
  async close(): Promise<void> {
    if (this === shared)
      throw new Error('KeyedExecutor.shared cannot be closed; it lives as long as the process');
    this.#stopLongTurns?.();
    this.#lanes.close();
  }

  /** `close()`, for `await using executor = new KeyedExecutor()`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
