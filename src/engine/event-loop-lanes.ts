import { ExecutorClosedError } from '../errors';
import { Lane } from './lane';
import { type LaneLoop, type LongTurnListener, threadLoop } from './lane-loop';

/** A dispatcher as its executor sees it: something to stop when the executor closes. */
export interface ExecutorClient {
  /** Errors the dispatcher's output with `error`; returns what user code threw while it stopped. */
  terminate(error: unknown): unknown[];
}

/**
 * Stops every client with `error`, all of them whatever some throw; throws what they threw together
 * once all are stopped.
 */
export function terminateAll(clients: Iterable<ExecutorClient>, error: unknown, executor: string): void {
  const failures: unknown[] = [];
  for (const client of [...clients]) {
    try {
      failures.push(...client.terminate(error));
    } catch (err) {
      failures.push(err);
    }
  }
  if (failures.length > 0) {
    throw new AggregateError(
      failures,
      `${executor}.close(): stopping ${failures.length} source(s) or handler(s) failed`,
    );
  }
}

/**
 * The event-loop lanes behind a `KeyedExecutor`, and the dispatchers running on them (stopped if the
 * executor closes under them). Each dispatcher's router asks it where a new mailbox goes (`place`).
 */
export class EventLoopLanes {
  readonly lanes: readonly Lane[];
  /** The loop of this thread, which runs the lanes. */
  readonly loop: LaneLoop = threadLoop;
  /**
   * The lane the next new mailbox of any dispatcher here goes to unless the running lane takes it: one
   * turn for them all, so that dispatchers spread over the lanes together.
   */
  private nextLane = 0;
  /** Dispatchers running on these lanes, stopped if they close under them. */
  private readonly clients = new Set<ExecutorClient>();
  closed = false;

  constructor(count: number) {
    this.lanes = Array.from({ length: count }, (_, i) => new Lane(i, this.loop, this));
  }

  /** The lane of this set that is running on this thread right now, or null. */
  get currentLane(): Lane | null {
    const lane = this.loop.current as Lane | null;
    return lane !== null && lane.owner === this ? lane : null;
  }

  /**
   * The lane a new mailbox is pinned to, in constant time: the lane of this set running right now if it
   * may take one with no hand-off (`LaneLoop.freeRunningLane`), else the next lane in the shared turn.
   */
  place(): Lane {
    const running = this.loop.freeRunningLane() as Lane | null;
    if (running !== null && running.owner === this) return running;
    const lane = this.lanes[this.nextLane] as Lane;
    // Wraps by comparison, not `%`: an integer division costs more than the rest of the choice.
    if (++this.nextLane === this.lanes.length) this.nextLane = 0;
    return lane;
  }

  /** Live mailboxes pinned to the lanes, across all dispatchers. */
  get liveMailboxes(): number {
    let n = 0;
    for (const lane of this.lanes) n += lane.pinned;
    return n;
  }

  attach(client: ExecutorClient): void {
    if (this.closed) throw new ExecutorClosedError('KeyedExecutor');
    this.clients.add(client);
  }

  detach(client: ExecutorClient): void {
    this.clients.delete(client);
  }

  /** Reports synchronous runs on these lanes longer than `thresholdMs`; returns the function that stops it. */
  watchLongTurns(thresholdMs: number, listener: (laneIndex: number, durationMs: number) => void): () => void {
    // The listener's result is returned, so the loop sees a promise it returns and follows its rejection.
    const watch: LongTurnListener = (lane, durationMs) =>
      (lane as Lane).owner === this ? listener((lane as Lane).index, durationMs) : undefined;
    return this.loop.watchLongTurns(thresholdMs, watch);
  }

  /**
   * Starts estimating the time the lanes spend running, into each lane's `busyMs` (one pass of the loop in `every`
   * is timed). The lanes of one thread are measured together. Returns the function that stops it.
   */
  measureBusy(every: number): () => void {
    return this.loop.measureBusy(every);
  }

  /**
   * Stops every dispatcher still running here with `ExecutorClosedError`; none can start afterwards.
   * Throws an `AggregateError` of what their sources or handlers threw while stopping, once all stopped.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const clients = [...this.clients];
    this.clients.clear();
    terminateAll(clients, new ExecutorClosedError('KeyedExecutor'), 'KeyedExecutor');
  }
}
