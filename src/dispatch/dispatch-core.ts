import { type Observable, type Observer, type Subscriber, Subscription } from 'rxjs';
import { threadLoop } from '../engine/lane-loop';
import type { KeyedExecutor } from '../executor';
import { GaveUp } from '../failure-policy';
import { RingQueue } from '../internal/ring-queue';
import type { ResolvedDispatchOptions } from '../options';
import {
  isPullable,
  openReceiver,
  type Pullable,
  type ReceiverSession,
  type ReceiverSink,
} from '../receiver';
import { type DispatchCounters, type DispatchSnapshot, statsLink } from '../stats';
import type { ThreadExecutor } from '../threads/thread-executor';
import { describe } from '../validate';
import type { Routed, Router } from './router';

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
 * One subscription of `keyedDispatch`, whatever its lanes: admits messages within the window, hands
 * each to its router, and turns outcomes into output, settlements and more demand. It completes once
 * and tears down once. Where messages run is the router's business (see `Router`).
 */
export class DispatchCore<T, K, R> implements ReceiverSink<T>, Routed<T, R>, DispatchCounters {
  closed = false;
  readonly router: Router<T, K>;
  /** Admitted messages not yet finished (running or queued): bounded by the window. */
  private inFlight = 0;
  /** Requested from the receiver and not yet delivered: counts against the window too. */
  private outstanding = 0;
  /** The receiver's session when the source is pullable; null for plain sources. */
  private session: ReceiverSession<T> | null = null;
  /** A plain source's subscription. */
  private subscription: SourceSubscriber<T> | null = null;
  /** Messages a plain source emitted beyond the window, admitted in order as it frees. */
  private readonly overflow = new RingQueue<T>();
  /** The source completed: the output completes once nothing is in flight. */
  private sourceDone = false;
  // Counters for stats; plain increments, read only on demand.
  private admitted = 0;
  private settled = 0;
  private failedCount = 0;
  private maxInFlightSeen = 0;

  constructor(
    private readonly options: ResolvedDispatchOptions<T, K, R>,
    private readonly subscriber: Subscriber<R>,
    /** The lanes the router runs on (what stats and metrics report on). */
    readonly executor: KeyedExecutor | ThreadExecutor,
    router: (dispatcher: DispatchCore<T, K, R>) => Router<T, K>,
  ) {
    this.router = router(this);
  }

  start(source: Observable<T>): void {
    this.router.open();
    if (this.options.stats) statsLink(this.options.stats).attach(this);
    if (isPullable<T>(source)) this.pull(source);
    else this.subscribeTo(source);
  }

  /** Opens a receiver and asks for a full window, as one admission batch. */
  private pull(source: Pullable<T>): void {
    threadLoop.hold();
    try {
      this.session = source[openReceiver](this);
      if (!this.closed && !this.sourceDone) {
        this.outstanding = this.options.maxInFlight;
        this.session.request(this.options.maxInFlight);
      }
    } finally {
      threadLoop.release();
    }
  }

  /**
   * Subscribes to a plain source. Each message runs as it arrives (no admission batch), as with
   * `mergeMap`; the subscription is held before subscribing, so a teardown while a synchronous source
   * is still emitting (a downstream `take`) stops it right there.
   */
  private subscribeTo(source: Observable<T>): void {
    const subscription = new SourceSubscriber(this);
    this.subscription = subscription;
    if (this.closed) subscription.unsubscribe();
    else source.subscribe(subscription);
  }

  // ReceiverSink: deliveries from a pullable source.
  next(message: T): void {
    // Nothing counts after a terminal signal, as in RxJS.
    if (this.closed || this.sourceDone) return;
    if (this.outstanding <= 0) {
      this.terminate(new Error('keyedDispatch: the receiver delivered more messages than were requested'));
      return;
    }
    this.outstanding--;
    this.admit(message);
  }

  error(err: unknown): void {
    if (!this.sourceDone) this.terminate(err);
  }

  settleFailed(err: unknown): void {
    this.terminate(err);
  }

  complete(): void {
    if (this.sourceDone) return;
    this.sourceDone = true;
    this.completeIfDone();
  }

  /** Takes back the messages `matches` accepts that have not started, admitted or still overflowed. */
  discard(matches: (message: T) => boolean): T[] {
    if (this.closed) return [];
    const discarded = this.router.discard(matches);
    this.inFlight -= discarded.length;
    // Overflowed messages were never admitted: taken back too, behind the admitted ones (arrival order).
    for (const m of this.overflow.removeWhere(matches)) discarded.push(m);
    if (discarded.length > 0) {
      this.requestMore();
      this.completeIfDone();
    }
    return discarded;
  }

  /** A plain source's message: admitted if the window has room, else overflow policy. */
  offer(message: T): void {
    if (this.closed) return;
    if (this.inFlight < this.options.maxInFlight && this.overflow.size === 0) this.admit(message);
    else if (this.options.onOverflow === 'error')
      this.terminate(new WindowOverflowError(this.options.maxInFlight));
    else this.overflow.push(message);
  }

  /** Takes a message in and hands it to the router under its key. */
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
    this.router.route(key, message);
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

  // Routed: what the router reports.
  emit(value: R): void {
    this.subscriber.next(value);
  }

  done(message: T): void {
    this.inFlight--;
    this.settled++;
    this.session?.settle(message, 'done');
    this.leftWindow();
  }

  /** The stream errors unless a failure policy gave up on the message (then it settles as failed and goes on). */
  failed(message: T, error: unknown): void {
    this.inFlight--;
    this.failedCount++;
    if (error instanceof GaveUp) {
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

  /** Completes the output once everything has finished, unless stopping the source failed (then it errors). */
  private completeIfDone(): void {
    if (this.sourceDone && this.inFlight === 0 && this.overflow.size === 0 && !this.closed) {
      const failures = this.teardown();
      if (failures.length === 0) this.subscriber.complete();
      else this.subscriber.error(failures[0]);
    }
  }

  /**
   * Errors the output after tearing everything down (the one place that errors it). Returns what user
   * code threw while stopping (see `teardown`): the output carries `error`, the first cause.
   */
  terminate(error: unknown): unknown[] {
    if (this.closed) return [];
    const failures = this.teardown();
    this.subscriber.error(error);
    return failures;
  }

  /**
   * Stops intake, cancels running handlers and withdraws everything not started. Idempotent. User code
   * that throws on the way (a receiver's `cancel`, a handler's teardown) does not stop it: what it threw
   * is returned, for the caller to report.
   */
  teardown(): unknown[] {
    if (this.closed) return [];
    this.closed = true;
    const failures: unknown[] = [];
    // First, so that nothing starts on any lane from here on, whatever the cancellations below run.
    attempt(() => this.router.close(), failures);
    const session = this.session;
    this.session = null;
    if (session !== null) attempt(() => session.cancel(), failures);
    if (this.subscription !== null) attempt(() => this.subscription?.unsubscribe(), failures);
    // After the router closed, so the final values show no live mailbox.
    if (this.options.stats) statsLink(this.options.stats).detach(this);
    this.overflow.clear();
    this.inFlight = 0;
    return failures;
  }

  /**
   * Admitted messages not finished yet — running (or waiting out a retry), queued, or overflowed — so
   * whoever stops this dispatcher can report what is left for redelivery.
   */
  unfinished(): T[] {
    const messages = this.router.unfinished();
    for (const m of this.overflow.toArray()) messages.push(m);
    return messages;
  }

  // DispatchCounters
  snapshot(): DispatchSnapshot {
    return {
      inFlight: this.inFlight,
      maxInFlight: this.options.maxInFlight,
      maxInFlightSeen: this.maxInFlightSeen,
      liveMailboxes: this.router.liveMailboxes,
      admitted: this.admitted,
      settled: this.settled,
      failed: this.failedCount,
      overflow: this.overflow.size,
    };
  }

  backlogOf(key: unknown): number {
    return this.router.backlogOf(key as K);
  }

  hotKeys(n: number): Array<{ key: unknown; backlog: number }> {
    return this.router.hotKeys(n);
  }
}

/** Runs `step`, keeping what it throws in `failures` instead of letting it stop the caller. */
function attempt(step: () => unknown, failures: unknown[]): void {
  try {
    step();
  } catch (err) {
    failures.push(err);
  }
}

/** What stopping threw, thrown on from an unsubscription (RxJS gathers it in an `UnsubscriptionError`). */
export function throwAll(failures: unknown[]): void {
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1) throw new AggregateError(failures, 'keyedDispatch: stopping failed');
}

/**
 * The dispatcher's subscriber to a plain source. RxJS uses it as it is (an Observer and a
 * Subscription), so a source that checks `closed` while it emits synchronously stops once the
 * dispatcher tears down.
 */
class SourceSubscriber<T> extends Subscription implements Observer<T> {
  constructor(
    private readonly dispatcher: Pick<DispatchCore<T, unknown, unknown>, 'offer' | 'error' | 'complete'>,
  ) {
    super();
  }

  next(message: T): void {
    if (!this.closed) this.dispatcher.offer(message);
  }

  error(err: unknown): void {
    if (this.closed) return;
    this.unsubscribe();
    this.dispatcher.error(err);
  }

  complete(): void {
    if (this.closed) return;
    this.unsubscribe();
    this.dispatcher.complete();
  }
}
