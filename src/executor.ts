import { availableParallelism } from 'node:os';
import { Lane } from './engine/lane';
import { type LongTurnListener, threadLoop } from './engine/lane-loop';
import { functionOption, integerOption } from './validate';

/** Options of `KeyedExecutor`. */
export interface KeyedExecutorOptions {
  /** Lanes (workers) shared by every dispatcher given this executor. Integer ≥ 1. Default: available processors. */
  workers?: number;
  /**
   * Told of every synchronous turn on these lanes that runs `longTurnMs` or longer: a handler blocking
   * the event loop (and every other key with it). Move such handlers to thread lanes (`ThreadExecutor`).
   * Called with the lane's index and the turn's duration. Default: none (turns are not timed).
   */
  onLongTurn?: (laneIndex: number, durationMs: number) => void;
  /** Threshold of `onLongTurn`, in milliseconds. Integer ≥ 1. Default 50. */
  longTurnMs?: number;
}

/** A dispatcher as its executor sees it: something to stop when the executor closes. */
export interface ExecutorClient {
  terminate(error: unknown): void;
}

/**
 * Raised into dispatchers still running when their executor is closed, and by a dispatcher started on
 * a closed executor. The message names the kind of executor (`KeyedExecutor` or `ThreadExecutor`).
 */
export class KeyedExecutorClosedError extends Error {
  override name = 'KeyedExecutorClosedError';
  constructor(executor: 'KeyedExecutor' | 'ThreadExecutor' = 'KeyedExecutor') {
    super(`${executor} was closed while a dispatcher was still running on it`);
  }
}

let shared: KeyedExecutor | undefined;

/**
 * A set of lanes shared by every dispatcher given it. Each lane has its own FIFO of ready mailboxes;
 * a mailbox is pinned to the lane it got when it was created. These are event-loop lanes: they run
 * on the thread that owns them, taking turns, so they give fairness and isolation between keys
 * (an async handler holds no lane), not CPU parallelism.
 *
 * Placement of a new mailbox:
 * 1. the lane running right now, if nothing else is queued on it (no hand-off at all);
 * 2. else a parked lane (nothing ready on it), scanning round-robin so parked lanes fill evenly;
 * 3. else the least loaded lane: fewest ready mailboxes, then fewest pinned mailboxes
 *    (our addition to the design, which stops at step 2).
 */
export class KeyedExecutor {
  /** The process-wide executor used when `keyedDispatch` is given none. It holds no handle, so it never keeps the process alive. */
  static get shared(): KeyedExecutor {
    shared ??= new KeyedExecutor({}, true);
    return shared;
  }

  readonly lanes: readonly Lane[];
  /** Dispatchers running on this executor, stopped if it closes under them. */
  private readonly clients = new Set<ExecutorClient>();
  /** Where the round-robin scan for a parked lane starts next. */
  private parkedCursor = 0;
  private isClosed = false;
  /** Stops the `onLongTurn` option's watch (null without it). */
  private readonly stopLongTurns: (() => void) | null = null;

  constructor(
    options: KeyedExecutorOptions = {},
    private readonly isShared = false,
  ) {
    const workers = integerOption('KeyedExecutor', 'workers', options.workers, availableParallelism(), 1);
    this.lanes = Array.from({ length: workers }, (_, i) => new Lane(i, threadLoop, this));
    const longTurnMs = integerOption('KeyedExecutor', 'longTurnMs', options.longTurnMs, 50, 1);
    if (options.onLongTurn !== undefined) {
      const listener = functionOption('KeyedExecutor', 'onLongTurn', options.onLongTurn);
      this.stopLongTurns = this.onLongTurn(longTurnMs, listener);
    }
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** The lane of this executor that is running on this thread right now, or null. */
  get currentLane(): Lane | null {
    const lane = threadLoop.current as Lane | null;
    return lane !== null && lane.owner === this ? lane : null;
  }

  /** Live mailboxes pinned to the lanes, across all dispatchers. */
  get liveMailboxes(): number {
    let n = 0;
    for (const lane of this.lanes) n += lane.pinned;
    return n;
  }

  /** @internal Chooses the lane a new mailbox is pinned to (see the class comment). */
  pickLane(): Lane {
    const lanes = this.lanes;
    const current = this.currentLane;
    if (current !== null && current.ready.size === 0) return current;
    const n = lanes.length;
    // Wraps by comparison, not `%`: this runs for every new mailbox, and an integer division costs more
    // than the rest of the scan.
    for (let i = 0, at = this.parkedCursor; i < n; i++) {
      const lane = lanes[at];
      if (++at === n) at = 0;
      if (lane.parked) {
        this.parkedCursor = at;
        return lane;
      }
    }
    let best = lanes[0];
    for (let i = 1; i < n; i++) {
      const lane = lanes[i];
      if (
        lane.ready.size < best.ready.size ||
        (lane.ready.size === best.ready.size && lane.pinned < best.pinned)
      ) {
        best = lane;
      }
    }
    return best;
  }

  /** @internal */
  attach(client: ExecutorClient): void {
    if (this.isClosed) throw new KeyedExecutorClosedError();
    this.clients.add(client);
  }

  /** @internal */
  detach(client: ExecutorClient): void {
    this.clients.delete(client);
  }

  /**
   * Reports synchronous turns longer than `thresholdMs` on this executor's lanes — a handler blocking
   * the event loop. CPU-bound handlers belong on thread lanes. Returns the function that stops it.
   */
  onLongTurn(thresholdMs: number, listener: (laneIndex: number, durationMs: number) => void): () => void {
    const watch: LongTurnListener = (lane, durationMs) => {
      if ((lane as Lane).owner === this) listener((lane as Lane).index, durationMs);
    };
    return threadLoop.watchLongTurns(thresholdMs, watch);
  }

  /**
   * @internal Starts estimating the time the lanes spend running, into each lane's `busyMs` (one run
   * in `every` is timed). The lanes of one thread are measured together. Returns the function that stops it.
   */
  measureBusy(every: number): () => void {
    return threadLoop.measureBusy(every);
  }

  /**
   * Closes the executor: dispatchers still running on it error with `KeyedExecutorClosedError` (their
   * unfinished messages are not settled), and no dispatcher can start on it afterwards. Stop your
   * dispatchers first to drain them. The shared executor cannot be closed.
   */
  async close(): Promise<void> {
    if (this.isShared)
      throw new Error('KeyedExecutor.shared cannot be closed; it lives as long as the process');
    if (this.isClosed) return;
    this.isClosed = true;
    this.stopLongTurns?.();
    const error = new KeyedExecutorClosedError();
    for (const client of [...this.clients]) client.terminate(error);
    this.clients.clear();
  }
}
