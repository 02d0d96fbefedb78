import type { Observable, ObservableInput, Subscriber, Subscription } from 'rxjs';
import { threadLoop } from './engine/lane-loop';
import { type HandlerContext, type Mailbox, type MailboxOwner, MailboxState } from './engine/mailbox';
import { MailboxTable } from './engine/mailbox-table';
import { type ExecutorClient, KeyedExecutor } from './executor';
import { GaveUp } from './failure-policy';
import { RingQueue } from './internal/ring-queue';
import type { ResolvedDispatchOptions } from './options';
import { describe } from './options';
import { isPullable, openReceiver, type ReceiverSession, type ReceiverSink } from './receiver';
import type { DispatchCounters, DispatchSnapshot, HandlerTimer } from './stats';
import type { ThreadExecutor } from './threads/thread-executor';

/** Raised by `onOverflow: 'error'` when a plain source emits while the window is full. */
export class WindowOverflowError extends Error {
  override name = 'WindowOverflowError';
  constructor(maxInFlight: number) {
    super(
      `keyedDispatch: a plain source emitted while ${maxInFlight} messages (\`maxInFlight\`) were in flight. ` +
        "Use a receiver (it is pulled, never outruns the window) or onOverflow: 'buffer'.",
    );
  }
}

/**
 * One subscription of `keyedDispatch`: admits messages within the window, routes each into its key's
 * mailbox, and turns handler outcomes into output, settlements and more demand.
 */
export class Dispatcher<T, K, R>
  implements MailboxOwner<T, K, R>, ReceiverSink<T>, ExecutorClient, DispatchCounters
{
  readonly throughput: number;
  closed = false;
  /** The user's handler, held here so the per-message call skips the options object. */
  private readonly userHandler: (message: T, context: HandlerContext<K>) => ObservableInput<R>;
  /** Mailboxes by key, live only while their key has unfinished messages, and the pool of drained ones. */
  private readonly mailboxes = new MailboxTable<T, K, R>();
  /** Admitted messages not yet finished (running or queued): bounded by the window. */
  private inFlight = 0;
  /** Requested from the receiver and not yet delivered: counts against the window too. */
  private outstanding = 0;
  /** The receiver's session when the source is pullable; null for plain sources. */
  private session: ReceiverSession<T> | null = null;
  /** A plain source's subscription. */
  private subscription: Subscription | null = null;
  /** Messages a plain source emitted beyond the window, admitted in order as it frees. */
  private readonly overflow = new RingQueue<T>();
  /** The source completed: the output completes once nothing is in flight. */
  private sourceDone = false;
  /** Where the mailboxes run: a `KeyedExecutor` here; a `ThreadDispatcher` runs them on a `ThreadExecutor`. */
  readonly executor: KeyedExecutor | ThreadExecutor;
  /** Times one handler in `timer.every` when metrics ask for it; null otherwise, so untimed runs pay one field check. */
  private readonly timer: HandlerTimer | null;
  /** Handlers left to start before the next timed one. */
  private untilTimed: number;
  /** The mailbox whose running handler is being timed (one at a time), and since when. */
  private timed: Mailbox<T, K, R> | null = null;
  private timedSince = 0;
  // Counters for stats; plain increments, read only on demand.
  private admitted = 0;
  private settled = 0;
  private failed = 0;
  private maxInFlightSeen = 0;

  constructor(
    private readonly options: ResolvedDispatchOptions<T, K, R>,
    private readonly subscriber: Subscriber<R>,
  ) {
    this.throughput = options.throughput;
    this.userHandler = options.handle;
    this.executor = options.executor ?? KeyedExecutor.shared;
    this.timer = options.stats?.handlerTimer() ?? null;
    this.untilTimed = this.timer?.every ?? 0;
  }

  start(source: Observable<T>): void {
    this.executor.attach(this);
    this.options.stats?.attach(this);
    threadLoop.hold();
    try {
      if (isPullable<T>(source)) {
        this.session = source[openReceiver](this);
        if (!this.closed && !this.sourceDone) {
          this.outstanding = this.options.maxInFlight;
          this.session.request(this.options.maxInFlight);
        }
      } else {
        this.subscription = source.subscribe({
          next: (message) => this.offer(message),
          error: (err) => this.terminate(err),
          complete: () => this.complete(),
        });
        if (this.closed) this.subscription.unsubscribe();
      }
    } finally {
      threadLoop.release();
    }
  }

  // ReceiverSink: deliveries from a pullable source.
  next(message: T): void {
    if (this.closed) return;
    if (this.outstanding <= 0) {
      this.terminate(new Error('keyedDispatch: the receiver delivered more messages than were requested'));
      return;
    }
    this.outstanding--;
    this.admit(message);
  }

  error(err: unknown): void {
    this.terminate(err);
  }

  complete(): void {
    this.sourceDone = true;
    this.completeIfDone();
  }

  discard(matches: (message: T) => boolean): T[] {
    const discarded: T[] = [];
    for (const mailbox of this.mailboxes.liveMailboxes()) {
      const removed = mailbox.queue.removeWhere(matches);
      if (removed.length === 0) continue;
      for (const m of removed) discarded.push(m);
      // A mailbox left empty stays in its lane's FIFO until its turn, which finds nothing and retires it.
      this.inFlight -= removed.length;
    }
    if (discarded.length > 0) {
      this.requestMore();
      this.completeIfDone();
    }
    return discarded;
  }

  /** A plain source's message: admitted if the window has room, else overflow policy. */
  private offer(message: T): void {
    if (this.closed) return;
    if (this.inFlight < this.options.maxInFlight && this.overflow.size === 0) this.admit(message);
    else if (this.options.onOverflow === 'error')
      this.terminate(new WindowOverflowError(this.options.maxInFlight));
    else this.overflow.push(message);
  }

  /** Takes a message in: into its key's mailbox, which gets a lane turn if it was empty. */
  private admit(message: T): void {
    let key: K;
    try {
      key = this.options.key(message);
    } catch (err) {
      this.reject(message, err);
      return;
    }
    if (key === undefined || key === null) {
      this.reject(
        message,
        new TypeError(
          `keyedDispatch: \`key\` returned ${describe(key)} for a message; every message needs a key`,
        ),
      );
      return;
    }
    this.admitted++;
    if (++this.inFlight > this.maxInFlightSeen) this.maxInFlightSeen = this.inFlight;
    this.route(key, message);
  }

  /**
   * A message without a usable key: settled as failed, and the output errors. Out of `admit`, which the
   * compiler inlines into every receiver's delivery loop: the smaller it is, the more of the routing
   * fits in the same inlining budget.
   */
  private reject(message: T, error: unknown): void {
    this.session?.settle(message, 'failed', error);
    this.terminate(error);
  }

  /** Puts an admitted message into its key's mailbox, which gets a lane turn if it was empty. */
  protected route(key: K, message: T): void {
    const mailbox = this.mailboxes.take(key);
    if (mailbox.state === MailboxState.Pooled) {
      const lane = (this.executor as KeyedExecutor).pickLane();
      lane.pinned++;
      mailbox.open(key, lane, this);
    }
    mailbox.queue.push(message);
    if (mailbox.state === MailboxState.Idle) {
      mailbox.state = MailboxState.Ready;
      mailbox.lane.enqueue(mailbox);
    }
  }

  // MailboxOwner: what mailboxes call back.
  handle(message: T, context: HandlerContext<K>): ObservableInput<R> {
    // The timed start is its own method: the clock read stays out of this per-message path.
    if (this.timer !== null && --this.untilTimed === 0) this.startTiming(context as Mailbox<T, K, R>);
    return this.userHandler(message, context);
  }

  /** Times the handler about to run in `mailbox` (the context is the mailbox), unless one is being timed. */
  private startTiming(mailbox: Mailbox<T, K, R>): void {
    this.untilTimed = (this.timer as HandlerTimer).every;
    if (this.timed !== null) return;
    this.timed = mailbox;
    this.timedSince = performance.now();
  }

  emit(value: R): void {
    this.subscriber.next(value);
  }

  settle(mailbox: Mailbox<T, K, R>, message: T): void {
    if (mailbox === this.timed) this.recordDuration();
    this.messageDone(message);
  }

  fail(mailbox: Mailbox<T, K, R>, message: T, error: unknown): void {
    if (mailbox === this.timed) this.recordDuration();
    this.messageFailed(message, error);
  }

  /** `message`'s handler completed, wherever it ran. */
  protected messageDone(message: T): void {
    this.inFlight--;
    this.settled++;
    this.session?.settle(message, 'done');
    this.leftWindow();
  }

  /** `message`'s handler failed, wherever it ran: the stream errors unless a failure policy gave up on it. */
  protected messageFailed(message: T, error: unknown): void {
    this.inFlight--;
    this.failed++;
    if (error instanceof GaveUp) {
      // The failure policy has dealt with it (retried, dead-lettered): settle as failed and go on.
      this.session?.settle(message, 'failed', error.cause);
      this.leftWindow();
      return;
    }
    this.session?.settle(message, 'failed', error);
    this.terminate(error);
  }

  /** A message left the window: admit the next overflowed one or ask for more, and complete if done. */
  private leftWindow(): void {
    if (this.overflow.size > 0) this.admit(this.overflow.shift() as T);
    else this.requestMore();
    this.completeIfDone();
  }

  private recordDuration(): void {
    this.timer?.record(performance.now() - this.timedSince);
    this.timed = null;
  }

  retire(mailbox: Mailbox<T, K, R>): void {
    mailbox.lane.pinned--;
    this.mailboxes.release(mailbox);
  }

  /** Asks the receiver for more once a batch's worth of the window is free. */
  private requestMore(): void {
    if (this.session === null || this.sourceDone || this.closed) return;
    const free = this.options.maxInFlight - this.inFlight - this.outstanding;
    if (free >= this.options.batch) this.request(this.session, free);
  }

  /** Asks for `free` more, as one admission batch. Out of `requestMore`, which runs for every message. */
  private request(session: ReceiverSession<T>, free: number): void {
    this.outstanding += free;
    threadLoop.hold();
    try {
      session.request(free);
    } finally {
      threadLoop.release();
    }
  }

  private completeIfDone(): void {
    if (this.sourceDone && this.inFlight === 0 && this.overflow.size === 0 && !this.closed) {
      this.teardown();
      this.subscriber.complete();
    }
  }

  /** Errors the output after tearing everything down (the one place that errors it). */
  terminate(error: unknown): void {
    if (this.closed) return;
    this.teardown();
    this.subscriber.error(error);
  }

  /** Stops intake, cancels running handlers and forgets every mailbox. Idempotent. */
  teardown(): void {
    if (this.closed) return;
    this.closed = true;
    this.executor.detach(this);
    const session = this.session;
    this.session = null;
    session?.cancel();
    this.subscription?.unsubscribe();
    for (const mailbox of this.mailboxes.liveMailboxes()) {
      mailbox.lane.pinned--;
      const inner = mailbox.inner;
      mailbox.inner = null;
      inner?.unsubscribe();
    }
    this.mailboxes.clear();
    // After the mailboxes are gone, so the final values show none live (and the unfinished messages, if any).
    this.options.stats?.detach(this);
    this.overflow.clear();
    this.inFlight = 0;
  }

  /**
   * Admitted messages not finished yet — running (or waiting out a retry), queued in a mailbox, or
   * overflowed — so whoever stops this dispatcher can report what is left for redelivery.
   */
  unfinished(): T[] {
    const messages: T[] = [];
    for (const mailbox of this.mailboxes.liveMailboxes()) {
      if (mailbox.state === MailboxState.Running || mailbox.state === MailboxState.Waiting) {
        messages.push(mailbox.current as T);
      }
      for (const m of mailbox.queue.toArray()) messages.push(m);
    }
    for (const m of this.overflow.toArray()) messages.push(m);
    return messages;
  }

  // DispatchCounters
  snapshot(): DispatchSnapshot {
    return {
      inFlight: this.inFlight,
      maxInFlight: this.options.maxInFlight,
      maxInFlightSeen: this.maxInFlightSeen,
      liveMailboxes: this.mailboxes.live,
      admitted: this.admitted,
      settled: this.settled,
      failed: this.failed,
      overflow: this.overflow.size,
    };
  }

  backlogOf(key: unknown): number {
    const mailbox = this.mailboxes.get(key as K);
    return mailbox === undefined ? 0 : backlogIn(mailbox);
  }

  hotKeys(n: number): Array<{ key: unknown; backlog: number }> {
    const all: Array<{ key: unknown; backlog: number }> = [];
    for (const mailbox of this.mailboxes.liveMailboxes())
      all.push({ key: mailbox.key, backlog: backlogIn(mailbox) });
    return all.sort((a, b) => b.backlog - a.backlog).slice(0, n);
  }
}

/** Unfinished messages of a live mailbox: queued, plus the one running (or waiting out a retry). */
function backlogIn(mailbox: Mailbox<unknown, unknown, unknown>): number {
  const running = mailbox.state === MailboxState.Running || mailbox.state === MailboxState.Waiting;
  return mailbox.queue.size + (running ? 1 : 0);
}
