import { type ObservableInput, type Observer, type SchedulerLike, Subscriber, type Subscription } from 'rxjs';
import { RingQueue } from '../internal/ring-queue';
import { followResult, hasNativeThen, type ResultFollower } from './handler-result';
import type { Lane } from './lane';
import { type Runnable, reportLater } from './lane-loop';

/** What a handler is told about the message it runs for. Valid only while that handler runs. */
export interface HandlerContext<K> {
  /** The message's key. */
  readonly key: K;
  /** The lane the key's mailbox is pinned to: schedule timers here to resume on it. */
  readonly scheduler: SchedulerLike;
  /** Index of that lane in its executor. */
  readonly laneIndex: number;
}

/** The side that owns mailboxes: runs handlers, receives their values and outcomes, recycles mailboxes. */
export interface MailboxOwner<T, K, R> {
  /** Messages one mailbox runs in a turn while they complete synchronously. */
  readonly throughput: number;
  /**
   * How many messages an item of the queue holds, when items are batches (absent: one each), so that
   * a turn counts messages: it runs batches while they complete synchronously until they held
   * `throughput` messages (at least one batch; a batch is never split).
   */
  readonly sizeOf?: (item: T) => number;
  /** True once torn down: mailboxes stop at the next step and drop what they hold. */
  readonly closed: boolean;
  /**
   * Called just before `message` starts: false when it was withdrawn meanwhile (discarded, or its
   * dispatcher stopped from another thread), and then it is skipped without being reported.
   */
  claim(message: T): boolean;
  handle(message: T, context: HandlerContext<K>): ObservableInput<R>;
  /** A value of the handler running in `mailbox` (its message is `mailbox.current`). */
  emit(value: R, mailbox: Mailbox<T, K, R>): void;
  /** The handler of `message` completed. */
  done(mailbox: Mailbox<T, K, R>, message: T): void;
  /** The handler of `message` threw or errored: the owner tears down (closed) or reports it and goes on. */
  failed(mailbox: Mailbox<T, K, R>, message: T, error: unknown): void;
  /** The mailbox ran dry: forget it (the mailbox must not be touched after this). */
  retire(mailbox: Mailbox<T, K, R>): void;
}

export enum MailboxState {
  /** Empty and about to be pooled, or just opened. */
  Idle = 0,
  /** In its lane's FIFO, waiting for a turn. */
  Ready = 1,
  /** Its turn is running now. */
  Running = 2,
  /** A handler is in flight asynchronously; the lane is free for other mailboxes. */
  Waiting = 3,
  /** Drained and pooled (or new): holds nothing, on no lane, until opened for a key. */
  Pooled = 4,
  /** Its handler finished asynchronously: in its lane's FIFO, its turn applies the outcome and goes on. */
  Completing = 5,
}

enum Outcome {
  Pending = 0,
  Done = 1,
  Failed = 2,
}

enum Note {
  Next = 0,
  NextThenComplete = 1,
  Complete = 2,
  Error = 3,
}

/**
 * The messages of one key, run one at a time in arrival order on the lane the mailbox is pinned to.
 * The same state machine runs on the main thread (event-loop lanes) and inside each worker thread.
 */
export class Mailbox<T, K, R> implements Runnable, HandlerContext<K>, ResultFollower<R> {
  /** Messages queued, not started. */
  queued = 0;
  /** The oldest queued message, held in the mailbox itself: most keys hold one message at a time. */
  private first: T | undefined = undefined;
  /** The queued messages behind `first`; allocated once a key holds two. */
  private rest: RingQueue<T> | null = null;
  state = MailboxState.Pooled;
  key!: K;
  lane!: Lane;
  owner!: MailboxOwner<T, K, R>;
  /** What its owner files it under: on event-loop lanes, its key's record in the dispatcher's key table. */
  record: unknown = null;
  /** The message whose handler is running (undefined between handlers). */
  current: T | undefined = undefined;
  /** The running handler's subscription, to cancel it on teardown. */
  inner: Subscription | null = null;
  /** The loop's link while the mailbox waits in its lane's FIFO (see `Runnable`). */
  nextInLine: Runnable | null = null;
  /** Bumped for each message, so a late notification from an earlier handler is ignored. */
  private generation = 0;
  /** True while the handler is being started (its synchronous part). */
  private sync = false;
  private outcome = Outcome.Pending;
  private failure: unknown = undefined;
  /** How the asynchronous handler ended, and its last value or error, kept for the `Completing` turn. */
  private endNote = Note.Complete;
  private endValue: unknown = undefined;

  /**
   * The callbacks given to a native Promise handler's `then`. Made once per mailbox, not per message: one
   * handler runs at a time, so its Promise settles before the next starts. Replaced when a handler is
   * left unsettled (see `reset`), so that Promise's late callbacks find themselves stale.
   */
  resolved!: (value: unknown) => void;
  rejected!: (err: unknown) => void;
  /** True while the running handler's Promise has the current callbacks. */
  private awaitsPromise = false;

  constructor() {
    this.makePromiseCallbacks();
  }

  get scheduler(): SchedulerLike {
    return this.lane;
  }

  get laneIndex(): number {
    return this.lane.index;
  }

  /** Binds a pooled or new mailbox to a key, a lane and an owner. */
  open(key: K, lane: Lane, owner: MailboxOwner<T, K, R>): this {
    this.key = key;
    this.lane = lane;
    this.owner = owner;
    this.state = MailboxState.Idle;
    return this;
  }

  /**
   * Queues a message; an idle mailbox gets a turn through its lane's FIFO, or, when its loop allows it
   * (a dispatcher's refill between two handlers: `LaneLoop.beginWithin`), starts it right here, inside
   * the turn its lane is running.
   */
  post(message: T): void {
    if (this.state !== MailboxState.Idle) {
      this.pushMessage(message);
      return;
    }
    // Idle, so nothing is queued: the message starts right here, or waits first in line for a turn.
    const lane = this.lane;
    const loop = lane.loop;
    if (loop.beginWithin(lane)) {
      let started = 1;
      try {
        // The key selector of this very message may have stopped the dispatcher: then nothing starts.
        if (this.owner.closed) this.pushMessage(message);
        else started = this.runFrom(message);
      } catch (err) {
        reportLater(err);
      } finally {
        loop.endWithin(lane, started);
      }
    } else {
      this.pushMessage(message);
      this.state = MailboxState.Ready;
      loop.enqueue(lane, this);
    }
  }

  /** Queues `message` behind the others, without giving the mailbox a turn (see `post`). */
  pushMessage(message: T): void {
    if (this.queued++ === 0) this.first = message;
    else (this.rest ??= new RingQueue<T>()).push(message);
  }

  /** Takes the oldest queued message; the caller checks `queued` first. */
  private shiftMessage(): T {
    const message = this.first as T;
    this.first = --this.queued === 0 ? undefined : (this.rest as RingQueue<T>).shift();
    return message;
  }

  /** The queued messages, oldest first. */
  queuedMessages(): T[] {
    return this.queued === 0 ? [] : [this.first as T, ...(this.rest?.toArray() ?? [])];
  }

  /** Takes out the queued messages `matches` accepts, keeping the others in order; returns those taken. */
  removeMessagesWhere(matches: (message: T) => boolean): T[] {
    const removed: T[] = [];
    const all = this.queuedMessages();
    // Asked first, so that a `matches` that throws leaves the queue as it was.
    const taken = all.map((m) => matches(m));
    this.clearMessages();
    all.forEach((m, i) => {
      if (taken[i]) removed.push(m);
      else this.pushMessage(m);
    });
    return removed;
  }

  private clearMessages(): void {
    this.first = undefined;
    this.queued = 0;
    this.rest?.trim();
  }

  /** Cancels the running handler, if it is asynchronous (its teardown runs now); the owner is closing. */
  cancel(): void {
    const inner = this.inner;
    this.inner = null;
    inner?.unsubscribe();
  }

  /** Forgets its messages and handler so it can be pooled; it stays its owner's record's mailbox. */
  reset(): void {
    if (this.awaitsPromise) this.makePromiseCallbacks();
    this.clearMessages();
    this.current = undefined;
    this.inner = null;
    this.generation++;
  }

  /** One turn: up to `throughput` messages while their handlers complete synchronously; returns how many started. */
  run(): number {
    const owner = this.owner;
    if (owner.closed) return 1;
    if (this.state === MailboxState.Completing && !this.endStored()) return 1;
    return this.goOn();
  }

  /**
   * The rest of a turn, once any stored end is applied: up to `throughput` messages while they complete
   * synchronously, or retirement when nothing is queued (its last message finished, or everything it held
   * was discarded while it waited for this turn). Returns how many started.
   */
  private goOn(): number {
    if (this.queued !== 0) return this.runQueued();
    this.state = MailboxState.Idle;
    this.owner.retire(this);
    return 1;
  }

  /** `goOn` with messages queued (kept apart, so an end that retires stays small). */
  private runQueued(): number {
    return this.runFrom(this.shiftMessage());
  }

  /** The turn's loop, from `first` (already out of the queue) on. */
  private runFrom(first: T): number {
    const owner = this.owner;
    this.state = MailboxState.Running;
    const sizeOf = owner.sizeOf;
    let message = first;
    for (let started = 1, ran = 0, throughput = owner.throughput; ; started++) {
      if (!this.start(message)) {
        if (!owner.closed) this.state = MailboxState.Waiting;
        return started;
      }
      if (owner.closed) return started;
      ran += sizeOf === undefined ? 1 : sizeOf(message);
      if (this.queued === 0 || ran >= throughput) {
        this.resumeOrRetire();
        return started;
      }
      message = this.shiftMessage();
    }
  }

  /**
   * Runs one message's handler; true when it finished (completed or failed) synchronously. An array,
   * the synchronous handler's usual result, is emitted right here; the rest goes to `followResult`.
   */
  private start(message: T): boolean {
    const owner = this.owner;
    if (!owner.claim(message)) return true;
    this.generation++;
    this.current = message;
    let input: ObservableInput<R>;
    try {
      input = owner.handle(message, this);
    } catch (err) {
      this.current = undefined;
      if (!owner.closed) owner.failed(this, message, err);
      return true;
    }
    if (owner.closed) {
      this.drop(input);
      return true;
    }
    if (!Array.isArray(input)) return this.follow(message, input);
    for (let i = 0; i < input.length && !owner.closed; i++) owner.emit(input[i], this);
    this.current = undefined;
    if (!owner.closed) owner.done(this, message);
    return true;
  }

  /**
   * The handler stopped the dispatcher (it unsubscribed the output, say): what it returned never runs,
   * and a Promise of it that rejects is not left unhandled.
   */
  private drop(input: ObservableInput<R>): void {
    this.current = undefined;
    if (hasNativeThen(input)) {
      try {
        input.then(undefined, ignore);
      } catch {
        // A `then` that throws registered nothing: there is nothing left to follow.
      }
    }
  }

  /** Follows the handler's result (the mailbox is its `ResultFollower`); true when it finished synchronously. */
  private follow(message: T, input: ObservableInput<R>): boolean {
    this.outcome = Outcome.Pending;
    this.sync = true;
    followResult(input, this.key, this);
    this.sync = false;
    if (this.outcome === Outcome.Pending) {
      // Neither ended nor subscribed: a Promise has the callbacks, which a pooled mailbox must replace.
      if (this.inner === null) this.awaitsPromise = true;
      return false;
    }
    return this.finishedInPlace(message);
  }

  /** The subscriber of an Observable result, held before subscribing, so a teardown can stop a handler that emits synchronously. */
  observer(): Observer<R> {
    const run = new HandlerRun(this, this.generation);
    this.inner = run;
    return run;
  }

  private makePromiseCallbacks(): void {
    this.awaitsPromise = false;
    const resolved = (value: unknown): void => {
      if (this.resolved === resolved) this.promiseEnded(Note.NextThenComplete, value);
    };
    const rejected = (err: unknown): void => {
      if (this.rejected === rejected) this.promiseEnded(Note.Error, err);
    };
    this.resolved = resolved;
    this.rejected = rejected;
  }

  /**
   * A Promise result ended: in place while it is being started (a thenable that calls back at once),
   * else (in a microtask, outside any turn) as `notify`'s end.
   */
  private promiseEnded(note: Note, value: unknown): void {
    this.awaitsPromise = false;
    if (this.sync) this.ended(this.generation, note, value);
    else if (!this.owner.closed) this.endOnLane(note, value, true);
  }

  /** The handler finished while it was being started: report it here, in the turn. */
  private finishedInPlace(message: T): boolean {
    this.current = undefined;
    this.inner = null;
    if (this.outcome === Outcome.Done) this.owner.done(this, message);
    else this.owner.failed(this, message, this.failure);
    this.failure = undefined;
    return true;
  }

  // What the running handler reports. While it is being started, its notifications are handled in
  // place; later ones are carried to the mailbox's lane, so the continuation runs there.

  /** A value of the handler run `generation`. */
  emitted(generation: number, value: R): void {
    if (this.sync) this.owner.emit(value, this);
    else this.notify(generation, Note.Next, value);
  }

  /** The handler run `generation` completed (`note` carries its last value) or failed. */
  ended(generation: number, note: Note, value: unknown): void {
    if (!this.sync) {
      this.notify(generation, note, value);
      return;
    }
    if (note === Note.Error) {
      this.outcome = Outcome.Failed;
      this.failure = value;
      return;
    }
    if (note === Note.NextThenComplete) this.owner.emit(value as R, this);
    this.outcome = Outcome.Done;
  }

  /**
   * A notification (a value, the end or a failure) of the handler run `generation`, outside a
   * synchronous start: applied in its lane's running turn, or on the lane.
   */
  private notify(generation: number, note: Note, value: unknown): void {
    if (generation !== this.generation || this.owner.closed) return;
    const lane = this.lane;
    if (lane.loop.current === lane) this.applyInPlace(note, value);
    else if (note === Note.Next) {
      const next = new HandlerNote(this, generation, note, value);
      if (!lane.loop.runNow(lane, next)) lane.loop.enqueue(lane, next);
    } else this.endOnLane(note, value, false);
  }

  /**
   * Applies a notification in its lane's running turn, where it arrived: the code that sent it is still
   * on the stack, so no key starts within the turn meanwhile (see `LaneLoop.beginWithin`).
   */
  private applyInPlace(note: Note, value: unknown): void {
    const loop = this.lane.loop;
    loop.blockStarts();
    try {
      this.apply(note, value);
    } finally {
      loop.unblockStarts();
    }
  }

  /**
   * The running handler ended outside its lane's turn. Its end takes the mailbox's own turn, which then
   * goes on with its queue: right here, as a turn begun for it, when the lane is free and the loop idle
   * (`LaneLoop.beginTurn`), else stored and queued in the lane's FIFO — `soon`, a microtask later, for a
   * Promise's end, so that the Promises that settle in one batch share one pass of the loop.
   */
  private endOnLane(note: Note, value: unknown, soon: boolean): void {
    const lane = this.lane;
    const loop = lane.loop;
    if (loop.beginTurn(lane)) {
      // The end is applied as this turn's first step, with nothing stored for it.
      try {
        if (this.end(note, value)) this.goOn();
      } catch (err) {
        reportLater(err);
      } finally {
        loop.endTurn(lane);
      }
      return;
    }
    this.completing(note, value, soon);
  }

  /** Stores the end for the mailbox's turn in its lane's FIFO (`soon`: the turn runs in a microtask). */
  private completing(note: Note, value: unknown, soon: boolean): void {
    this.endNote = note;
    this.endValue = value;
    this.state = MailboxState.Completing;
    if (soon) this.lane.loop.enqueueSoon(this.lane, this);
    else this.lane.loop.enqueue(this.lane, this);
  }

  /** The `Completing` turn's start: applies the end stored by `completing`. */
  private endStored(): boolean {
    const value = this.endValue;
    this.endValue = undefined;
    return this.end(this.endNote, value);
  }

  /**
   * Applies the running handler's end (`note` carries its last value, or its error); false when the
   * owner closed meanwhile. After a failure the owner has either torn down (closed) or reported it.
   */
  private end(note: Note, value: unknown): boolean {
    const owner = this.owner;
    if (note === Note.NextThenComplete) owner.emit(value as R, this);
    if (owner.closed) return false;
    const message = this.current as T;
    this.current = undefined;
    this.inner = null;
    if (note === Note.Error) owner.failed(this, message, value);
    else owner.done(this, message);
    return !owner.closed;
  }

  /** Applies an asynchronous notification of the running handler; runs on the mailbox's lane. */
  apply(note: Note, value: unknown): void {
    if (note === Note.Next) this.owner.emit(value as R, this);
    else if (this.end(note, value)) this.resumeOrRetire();
  }

  /** After a handler finished: back in its lane's FIFO if messages wait, else retired to its owner. */
  private resumeOrRetire(): void {
    if (this.queued > 0) {
      this.state = MailboxState.Ready;
      this.lane.loop.enqueue(this.lane, this);
    } else {
      this.state = MailboxState.Idle;
      this.owner.retire(this);
    }
  }

  /** Seen by a late note to tell whether it still belongs to the running handler. */
  isRunning(generation: number): boolean {
    return generation === this.generation && !this.owner.closed;
  }
}

/**
 * The subscriber of one handler Observable. RxJS uses it as it is (a `Subscriber`, as its own operators'
 * inner subscribers are: no wrapper, no duck-typing), so the handler's operators add their teardowns
 * here, and unsubscribing it stops the handler even while it emits synchronously. On completion or error
 * it first unsubscribes itself, so the handler's finalization runs before the key's next message starts,
 * as with `concatMap`.
 */
class HandlerRun<T, K, R> extends Subscriber<R> {
  constructor(
    private readonly mailbox: Mailbox<T, K, R>,
    private readonly generation: number,
  ) {
    super();
  }

  protected override _next(value: R): void {
    this.mailbox.emitted(this.generation, value);
  }

  protected override _error(err: unknown): void {
    this.unsubscribe();
    this.mailbox.ended(this.generation, Note.Error, err);
  }

  protected override _complete(): void {
    this.unsubscribe();
    this.mailbox.ended(this.generation, Note.Complete, undefined);
  }
}

/** An asynchronous handler notification waiting for its turn on the mailbox's lane. */
class HandlerNote<T, K, R> implements Runnable {
  /** Set when queued (a note is queued once, when made). */
  declare nextInLine: Runnable | null;

  constructor(
    private readonly mailbox: Mailbox<T, K, R>,
    private readonly generation: number,
    private readonly note: Note,
    private readonly value: unknown,
  ) {}

  run(): number {
    if (this.mailbox.isRunning(this.generation)) this.mailbox.apply(this.note, this.value);
    return 1;
  }
}

const ignore = (): void => undefined;
