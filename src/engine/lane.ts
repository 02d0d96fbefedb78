import { asyncScheduler, type SchedulerAction, type SchedulerLike, Subscription } from 'rxjs';
import { type LaneLoop, LaneState, LinkedQueue, type LoopLane, type Runnable } from './lane-loop';

/**
 * One worker of an executor: a FIFO of ready mailboxes and actions, run by its thread's loop. It is an
 * RxJS scheduler too, so a handler can put its own timers and continuations on the lane its mailbox
 * is pinned to (`timer(100, ctx.scheduler)`). Delays are timed by RxJS's `asyncScheduler`, so they
 * follow virtual time inside `TestScheduler.run`.
 */
export class Lane implements SchedulerLike, LoopLane {
  readonly ready = new LinkedQueue<Runnable>();
  nextInLine: LoopLane | null = null;
  state = LaneState.Idle;
  /** Live mailboxes pinned to this lane (shown by metrics). */
  pinned = 0;
  busyMs = 0;
  timedRuns = 0;

  constructor(
    /** Position of the lane in its executor, from 0. */
    readonly index: number,
    readonly loop: LaneLoop,
    /** The executor the lane belongs to (null for a thread's own lane), so it can tell its lanes in O(1). */
    readonly owner: object | null = null,
  ) {}

  now(): number {
    return asyncScheduler.now();
  }

  schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
    return new LaneAction<T>(this, work).schedule(state, delay);
  }
}

/** A unit of scheduled work on a lane; cancelling it costs O(1) (it is skipped when its turn comes). */
class LaneAction<T> extends Subscription implements SchedulerAction<T>, Runnable {
  /** State passed to the next run. */
  private state: T | undefined;
  /** The pending delay, when scheduled with one. */
  private timer: Subscription | null = null;
  /** True while the action sits in the lane's FIFO, so rescheduling never queues it twice. */
  private queued = false;
  /** Set when queued. */
  declare nextInLine: Runnable | null;

  constructor(
    private readonly lane: Lane,
    private readonly work: (this: SchedulerAction<T>, state?: T) => void,
  ) {
    super(() => this.timer?.unsubscribe());
  }

  schedule(state?: T, delay = 0): Subscription {
    if (this.closed) return this;
    this.state = state;
    this.timer?.unsubscribe();
    this.timer = null;
    if (delay > 0) {
      this.timer = asyncScheduler.schedule(() => {
        this.timer = null;
        this.post();
      }, delay);
    } else {
      this.post();
    }
    return this;
  }

  run(): number {
    this.queued = false;
    if (!this.closed) this.work.call(this, this.state);
    return 1;
  }

  private post(): void {
    if (this.queued) return;
    this.queued = true;
    this.lane.loop.enqueue(this.lane, this);
  }
}
