import { asapScheduler, type Observable, type Observer, type Subscriber, Subscription } from 'rxjs';
import type { EventLoopLanes } from '../engine/event-loop-lanes';
import type { LaneLoop } from '../engine/lane-loop';
import { type FailurePolicy, isGaveUp, type PolicyHost } from '../failure-policy';
import type { EndingRecord } from '../health/facts';
import { callUser, THREW } from '../internal/call-user';
import type { MessageObserver } from '../internal/message-observer';
import { SegmentQueue } from '../internal/segment-queue';
import { isPromiseLike } from '../internal/thenable';
import { isKeyFailure, KeyFailure, noKey } from '../key-failure';
import { MessageError } from '../message-error';
import { chosenPolicy, type ResolvedDispatchOptions } from '../options';
import {
  isPullable,
  openReceiver,
  type Pullable,
  type ReceiverSession,
  type ReceiverSink,
  type Settlement,
} from '../receiver';
import {
  type DispatchCounters,
  type DispatcherCounts,
  type HotKey,
  type MessageFailure,
  statsLink,
  type TransportFaultSeen,
} from '../stats';
import type { TransportFault } from '../transport-fault';
import { type KeyRecord, KeyTable } from './key-table';
import type { Dispatcher, Router } from './router';

/** Raised by `onOverflow: 'error'` when a plain source emits while the window is full. */
export class WindowOverflowError extends Error {
  /** The error's name, for logs and `instanceof`-free checks. */
  override name = 'WindowOverflowError';
  constructor(maxInFlight: number) {
    super(
      `keyedDispatch: a plain source emitted while ${maxInFlight} messages (\`maxInFlight\`) were in flight. ` +
        "Use a receiver (it is pulled, never outruns the window) or onOverflow: 'buffer'.",
    );
  }
}

/**
 * Most messages asked of a receiver at once. A synchronous receiver delivers them before anything they
 * started can finish; beyond a few thousand, what they hold outgrows V8's young generation and every
 * collection copies it.
 */
const MAX_REQUEST = 1024;

/**
 * One subscription of `keyedDispatch`, whatever its lanes: admits messages within the window, hands
 * each to its router, and turns outcomes into output, settlements and more demand. It completes once
 * and tears down once. Where messages run is the router's business (see `Router`).
 */
export class DispatchCore<T, K, R>
  implements ReceiverSink<T>, Dispatcher<T, K, R>, DispatchCounters, PolicyHost<T>
{
  closed = false;
  /** Made in `start`, once the source (and so the failure policy) is known; none before. */
  router: Router<T, K> = NO_ROUTER as Router<T, K>;
  /** A failure policy goes around the handler: a message whose key selector failed goes to it too. */
  private hasPolicy = false;
  /** Admitted messages not yet finished (running or queued): bounded by the window. */
  private inFlight = 0;
  /** Requested from the receiver and not yet delivered: counts against the window too. */
  private outstanding = 0;
  /** The receiver's session when the source is pullable; null for plain sources (the stats read its lag). */
  session: ReceiverSession<T> | null = null;
  /** A plain source's subscription. */
  private subscription: SourceSubscriber<T> | null = null;
  /** Messages a plain source emitted beyond the window, admitted in order as it frees. */
  private readonly overflow = new SegmentQueue<T>();
  /** What each key holds: unfinished and parked messages, its batches, its placement on the lanes. */
  readonly keys: KeyTable<T, K>;
  /** The least worth asking for: a batch, or the whole parking area when it is smaller. */
  private readonly requestAt: number;
  /** In flight and requested at most this many, the window has a batch free (the parking area may not). */
  private readonly requestBelow: number;
  /** More demand is due in a microtask (a request stopped at `MAX_REQUEST`): none is asked for before it. */
  private requestQueued = false;
  /** The source completed: the output completes once nothing is in flight. */
  private sourceDone = false;
  /** The receiver is being opened: its session is not known yet, so the output cannot complete. */
  private opening = false;
  // Counters for stats; plain increments, read only on demand.
  private admitted = 0;
  private settled = 0;
  private failedCount = 0;
  private deadLettered = 0;
  private failedAttempts = 0;
  /** The last failure of each kind: one slot each, written only when something fails. */
  private lastFailure: MessageFailure | null = null;
  private lastTransportFault: TransportFaultSeen | null = null;
  private maxInFlightSeen = 0;
  private readonly transportFaults = { fetch: 0, commit: 0, heartbeat: 0, connection: 0 };
  // Read by health checks (see `HealthFacts`), kept off the message path.
  unansweredFault: TransportFault | null = null;
  readonly end: EndingRecord = { ending: null };
  /** When an attempt at a message last failed: a retry is progress. Objects only (a WeakMap's keys). */
  private readonly lastFailures = new WeakMap<object, number>();
  /** What the key selector threw last: read right after `callUser` answers `THREW`. */
  private keyError: unknown = undefined;
  /**
   * The selector's failure, bound once (nothing allocated per message). An async selector's rejection
   * lands here later, unread: its message already failed with `noKey`, and it is not left unhandled.
   */
  private readonly keyThrew = (err: unknown): void => {
    this.keyError = err;
  };

  /** The lane loop of this thread, which batches admissions (see `LaneBackend.loop`). */
  private readonly loop: LaneLoop;
  /** Told about parking and (by the failure policy) giving up, when `traced` installed it. */
  readonly observer: MessageObserver<T> | undefined;

  constructor(
    private readonly options: ResolvedDispatchOptions<T, K, R>,
    private readonly subscriber: Subscriber<R>,
    private readonly makeRouter: (
      dispatcher: DispatchCore<T, K, R>,
      policy: FailurePolicy<T, K> | undefined,
    ) => Router<T, K>,
  ) {
    this.loop = options.lanes.loop;
    this.keys = new KeyTable<T, K>(options.maxPerKey);
    this.observer = options.observer;
    this.requestAt = Math.min(options.batch, options.maxParked);
    this.requestBelow = options.maxInFlight - this.requestAt;
  }

  /** The lanes on this thread its handlers run on, which metrics measure; null on thread lanes. */
  get localLanes(): EventLoopLanes | null {
    return this.options.lanes.local;
  }

  watchLongTurns(thresholdMs: number, listener: (laneIndex: number, durationMs: number) => void): () => void {
    return this.options.lanes.watchLongTurns(thresholdMs, listener);
  }

  start(source: Observable<T>): void {
    if (isPullable<T>(source)) {
      this.pull(source);
      return;
    }
    this.openRouter(undefined);
    this.subscribeTo(source);
  }

  /**
   * Makes and opens the router, with the failure policy given, else the receiver's default: a plain
   * source has none, so its failures error the output as in RxJS. Throws when the executor is closed.
   */
  private openRouter(receiverDefault: FailurePolicy<T, unknown> | undefined): void {
    const policy = chosenPolicy(this.options.failurePolicy, receiverDefault);
    this.hasPolicy = policy !== undefined;
    this.router = this.makeRouter(this, policy);
    this.router.open();
    if (this.options.stats) statsLink(this.options.stats).attach(this);
  }

  /** Opens a receiver and asks for a full window, as one admission batch. */
  private pull(source: Pullable<T>): void {
    this.loop.batchAdmissions();
    try {
      this.opening = true;
      let session: ReceiverSession<T>;
      try {
        session = source[openReceiver](this);
      } finally {
        this.opening = false;
      }
      if (this.closed) {
        // It errored while being opened, before the teardown knew it: cancelled now. The output carries
        // its error already, so what cancelling throws is dropped, as after any first failure.
        attempt(() => session.cancel(), []);
        return;
      }
      try {
        this.openRouter(session.defaultFailurePolicy);
      } catch (err) {
        // The executor is closed: the session opened for nothing, and nothing tears it down but this.
        attempt(() => session.cancel(), []);
        throw err;
      }
      this.session = session;
      // A source that completed while being opened completes the output now, cancelled as any other.
      if (this.sourceDone) this.completeIfDone();
      else this.request(session, Math.min(this.options.maxInFlight, this.options.maxParked));
    } finally {
      this.loop.flushAdmissions();
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

  transportFault(fault: TransportFault): void {
    this.transportFaults[fault.operation]++;
    this.lastTransportFault = { ...fault, time: Date.now() };
    this.unansweredFault = fault;
  }

  transportRecovered(): void {
    this.unansweredFault = null;
  }

  complete(): void {
    if (this.sourceDone) return;
    this.sourceDone = true;
    this.completeIfDone();
  }

  /** Takes back the messages `matches` accepts that have not started: admitted, parked or overflowed. */
  discard(matches: (message: T) => boolean): T[] {
    if (this.closed) return [];
    // The router reports what it took back of each key (`withdrawn`).
    const discarded = this.router.discard(matches);
    // Parked and overflowed messages never entered the window: taken back too, behind the admitted ones.
    for (const m of this.keys.removeParkedWhere(matches)) {
      this.tell('unparked', m);
      discarded.push(m);
    }
    for (const m of this.overflow.removeWhere(matches)) discarded.push(m);
    if (discarded.length > 0) {
      // Keys whose admitted messages were taken back have room in their share again.
      this.unparkWhereRoom();
      this.requestMore();
      this.completeIfDone();
    }
    return discarded;
  }

  /** A plain source's message: admitted if the window (and the parking area) has room, else overflow policy. */
  offer(message: T): void {
    if (this.closed) return;
    if (this.hasRoom() && this.overflow.size === 0) this.admit(message);
    else if (this.options.onOverflow === 'error')
      this.terminate(new WindowOverflowError(this.options.maxInFlight));
    else this.overflow.push(message);
  }

  /**
   * Takes a message in: into the window and on to the router, or parked, as its key's record decides
   */
  private admit(message: T): void {
    const key = callUser(this.options.key, message, undefined, undefined, this.keyThrew);
    if (key === THREW) {
      this.keyFailed(message, this.keyError);
      return;
    }
    // A Promise (an async selector) would file every message under a key of its own.
    if (key === undefined || key === null || (typeof key === 'object' && isPromiseLike(key))) {
      this.keyFailed(message, noKey(key));
      return;
    }
    const record = this.keys.take(key);
    if (this.keys.admits(record)) this.enter(record, message);
    else this.park(record, message);
  }

  /** Hands a message to the router, into the window. */
  private enter(record: KeyRecord<T, K>, message: T): void {
    this.admitted++;
    record.unfinished++;
    // Counted before routing: a handler may finish within it.
    const inFlight = ++this.inFlight;
    if (inFlight > this.maxInFlightSeen) this.maxInFlightSeen = inFlight;
    this.router.route(record as KeyRecord<unknown, K>, message);
  }

  /** Waits outside the window, behind the key's other parked messages: the one place a message parks. */
  private park(record: KeyRecord<T, K>, message: T): void {
    this.keys.park(record, message);
    this.tell('parked', message);
    // What was asked for covered this message, which now takes no room in the window: ask again.
    this.requestMore();
  }

  /** Parked messages of the key enter the window, oldest first, while its share has room. */
  private unpark(record: KeyRecord<T, K>): void {
    while (record.parked !== null && !this.closed && this.keys.admits(record, true)) {
      const message = this.keys.unpark(record);
      this.enter(record, message);
      if (this.closed) return; // its routing failed, and the output errored: teardown forgot the parked
      this.tell('unparked', message);
    }
  }

  /**
   * Tells the session (and a tracing observer) a message parked, or left the parking area; a session
   * that throws errors the output.
   */
  private tell(hook: 'parked' | 'unparked', message: T): void {
    this.observer?.[hook](message);
    try {
      this.session?.[hook]?.(message);
    } catch (err) {
      this.terminate(err);
    }
  }

  /** Parked messages enter the window wherever their key's share has room. */
  private unparkWhereRoom(): void {
    for (const record of this.keys.live()) {
      this.unpark(record);
      this.keys.letGoIfIdle(record);
    }
  }

  /** The window has room and so has the parking area: a plain source's next message can come in. */
  private hasRoom(): boolean {
    return this.inFlight < this.options.maxInFlight && this.keys.parkedCount < this.options.maxParked;
  }

  /**
   * A message without a usable key. With a failure policy it goes to the dead letter, in a mailbox of its
   * own (see `KeyFailure`); without one the output errors and the message is never settled: no handler
   * and no policy has seen it, so no receiver may acknowledge it. Kept out of `admit`, which every
   * delivered message runs through.
   */
  private keyFailed(message: T, error: unknown): void {
    // A key of its own holds nothing yet, so its share always has room.
    if (this.hasPolicy) this.enter(this.keys.take(new KeyFailure(error) as K), message);
    else {
      this.failedAttempts++;
      this.terminate(this.messageFailure(message, undefined, error));
    }
  }

  /**
   * The output's error for a failure of `message`'s own code: a `MessageError` naming its key and where it
   * came from, when its receiver says; else the error as thrown.
   */
  private messageFailure(message: T, key: K | undefined, error: unknown): unknown {
    const source = this.sourceOf(message);
    return source === undefined ? error : new MessageError(key, source, error);
  }

  // PolicyHost: what the failure policy asks.
  sourceOf(message: T): string | undefined {
    try {
      return this.session?.describe?.(message);
    } catch {
      // `describe` must not throw; one that does leaves the source unsaid (a failure as thrown).
      return undefined;
    }
  }

  failedAttempt(messages: readonly T[]): void {
    this.failedAttempts++;
    const now = Date.now();
    for (const message of messages) {
      if (typeof message === 'object' && message !== null) this.lastFailures.set(message, now);
    }
  }

  // Dispatcher: what the router reports.
  emit(value: R): void {
    this.subscriber.next(value);
  }

  done(message: T, record: KeyRecord<T, K>): void {
    this.inFlight--;
    record.unfinished--;
    this.settled++;
    this.settle(message, 'done');
    this.leftWindow(record);
  }

  /**
   * The stream errors unless a failure policy gave up on the message: then it settles as dead-lettered
   * (its dead letter dealt with it) or failed, and the stream goes on.
   */
  failed(message: T, record: KeyRecord<T, K>, error: unknown): void {
    this.inFlight--;
    record.unfinished--;
    this.failedCount++;
    const key = record.key;
    if (isGaveUp(error)) {
      if (error.deadLettered) this.deadLettered++;
      this.noteFailure(message, key, error.cause, error.deadLettered ? 'dead-lettered' : 'failed');
      this.settle(message, error.deadLettered ? 'dead-lettered' : 'failed', error.cause);
      this.leftWindow(record);
      return;
    }
    // Without a policy, the handler's own failure; with one, the policy failed (its dead letter threw).
    if (!this.hasPolicy) this.failedAttempts++;
    const failure = this.messageFailure(message, isKeyFailure(key) ? undefined : key, error);
    this.noteFailure(message, key, error, 'failed');
    this.settle(message, 'failed', error);
    this.terminate(failure);
  }

  private noteFailure(message: T, key: K, error: unknown, outcome: MessageFailure['outcome']): void {
    // A key selector's failure is routed under a `KeyFailure` key, which holds that error.
    const failedKey = isKeyFailure(key);
    this.lastFailure = {
      error: failedKey ? (key as KeyFailure).error : error,
      key: failedKey ? undefined : key,
      source: this.sourceOf(message),
      outcome,
      time: Date.now(),
    };
  }

  /**
   * Tells the session `message`'s outcome. A session that throws errors the output with it, as a
   * `PullSession` does when its acknowledgement throws: the message is not acknowledged.
   */
  private settle(message: T, outcome: Settlement, cause?: unknown): void {
    try {
      this.session?.settle(message, outcome, cause);
    } catch (err) {
      this.terminate(err);
    }
  }

  withdrawn(record: KeyRecord<T, K>, count: number): void {
    this.inFlight -= count;
    record.unfinished -= count;
    this.keys.letGoIfIdle(record);
  }

  /**
   * A message of the key left the window: the key's next parked message takes its place, then the next
   * overflowed message comes in or more is asked for; and the output completes if all is done. The
   * key's record is filed by its lanes, which still hold the key here, when they let go of it.
   */
  private leftWindow(record: KeyRecord<T, K>): void {
    if (record.parked !== null) this.unpark(record);
    if (this.overflow.size > 0) this.admitOverflowed();
    // Most ends leave less than a batch free: skipped at once (see `requestMore`).
    else if (this.inFlight + this.outstanding <= this.requestBelow) this.requestMore(true);
    this.completeIfDone();
  }

  /**
   * Admits overflowed messages while the window and the parking area have room, a batch at a time as a
   * receiver's come (one at a time, each woke its lane for one message).
   */
  private admitOverflowed(): void {
    if (this.options.maxInFlight - this.inFlight < this.requestAt) return;
    // Called only after a handler ended: a refill, so a new key may start in the running turn.
    this.loop.beginRefill();
    try {
      while (this.overflow.size > 0 && this.hasRoom() && !this.closed) this.admit(this.overflow.shift() as T);
    } finally {
      this.loop.endRefill();
    }
  }

  /**
   * Asks the receiver for more once a batch's worth is free: of the window, and of the parking area, so
   * that whatever arrives can wait there if its key is at its share. `refill`: asked after a handler
   * ended, with no code of the user's on the stack (see `LaneLoop.beginRefill`).
   */
  private requestMore(refill = false): void {
    if (this.session === null || this.sourceDone || this.closed || this.requestQueued) return;
    let free = this.options.maxInFlight - this.inFlight - this.outstanding;
    // The parking area bounds it too once something is parked, or always when it is smaller than the window.
    const parked = this.keys.parkedCount;
    if (parked !== 0 || this.options.maxParked < this.options.maxInFlight) {
      free = Math.min(free, this.options.maxParked - parked - this.outstanding);
    }
    if (free >= this.requestAt) this.request(this.session, free, refill);
  }

  /**
   * Asks for `free` more, as one admission batch, at most `MAX_REQUEST` now and the rest a microtask later:
   * messages that finish at once (an already resolved Promise) then leave before more come in, so a large
   * window does not hold a large working set. Out of `requestMore`, which runs for every message.
   */
  private request(session: ReceiverSession<T>, free: number, refill = false): void {
    const now = Math.min(free, MAX_REQUEST);
    this.outstanding += now;
    // A handler may start inside the handover only where the session says it can be re-entered from there.
    const refills = refill && session.reentrant === true;
    this.loop.batchAdmissions();
    if (refills) this.loop.beginRefill();
    try {
      session.request(now);
    } catch (err) {
      // From the first request, or from a refill after a handler ended, where nothing else would see it.
      this.terminate(err);
    } finally {
      if (refills) this.loop.endRefill();
      this.loop.flushAdmissions();
    }
    if (now < free && !this.requestQueued) {
      this.requestQueued = true;
      // RxJS's asap scheduler: a microtask, except in virtual time (`TestScheduler.run`), where it stays virtual.
      // By then the Promises of this batch that settled at once have settled: their completions leave first.
      asapScheduler.schedule(() => {
        this.loop.runQueuedNow();
        this.requestQueued = false;
        this.requestMore();
      });
    }
  }

  /** Completes the output once everything has finished, unless stopping the source failed (then it errors). */
  private completeIfDone(): void {
    if (
      this.sourceDone &&
      this.inFlight === 0 &&
      this.overflow.size === 0 &&
      this.keys.parkedCount === 0 &&
      !this.closed &&
      !this.opening
    )
      this.finish();
  }

  /** Tears down and completes the output, or errors it with what failed in the teardown. */
  private finish(): void {
    this.end.ending = 'completed';
    const failures = this.teardown();
    if (failures.length === 0) this.subscriber.complete();
    else {
      this.end.ending = { error: failures[0] };
      this.subscriber.error(failures[0]);
    }
  }

  /**
   * Errors the output after tearing everything down (the one place that errors it). Returns what user
   * code threw while stopping (see `teardown`): the output carries `error`, the first cause.
   */
  terminate(error: unknown): unknown[] {
    if (this.closed) return [];
    this.end.ending = { error };
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
    this.end.ending ??= 'unsubscribed';
    const failures: unknown[] = [];
    // First, so that nothing starts on any lane from here on, whatever the cancellations below run.
    attempt(() => this.router.close(), failures);
    const session = this.session;
    this.session = null;
    if (session !== null) attempt(() => session.cancel(), failures);
    if (this.subscription !== null) attempt(() => this.subscription?.unsubscribe(), failures);
    this.keys.clear();
    // After the router closed and the keys were forgotten, so the final values show no live mailbox.
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
    const messages = this.windowMessages();
    for (const m of this.keys.parkedMessages()) messages.push(m);
    for (const m of this.overflow.toArray()) messages.push(m);
    return messages;
  }

  windowMessages(): T[] {
    return this.router.unfinished();
  }

  // DispatchCounters
  snapshot(): DispatcherCounts {
    return {
      inFlight: this.inFlight,
      maxInFlight: this.options.maxInFlight,
      maxInFlightSeen: this.maxInFlightSeen,
      liveMailboxes: this.keys.liveCount,
      admitted: this.admitted,
      settled: this.settled,
      failed: this.failedCount,
      deadLettered: this.deadLettered,
      failedAttempts: this.failedAttempts,
      overflow: this.overflow.size,
      parked: this.keys.parkedCount,
      maxPerKey: this.options.maxPerKey,
      maxParked: this.options.maxParked,
      transportFaults: { ...this.transportFaults },
      lastFailure: this.lastFailure,
      lastTransportFault: this.lastTransportFault,
    };
  }

  lastFailureOf(message: unknown): number | undefined {
    // A WeakMap answers undefined for a primitive.
    return this.lastFailures.get(message as object);
  }

  notReadyBecause(): string | undefined {
    return this.session?.notReadyBecause?.();
  }

  /** Unfinished messages of `key`: in the window (running or queued) and parked. */
  backlogOf(key: unknown): number {
    return this.keys.backlogOf(key as K);
  }

  /** The `n` keys with the most unfinished messages, parked ones included, largest first. */
  hotKeys(n: number): HotKey[] {
    return this.keys.hotKeys(n);
  }
}

/** The router of a dispatcher not started yet: it holds nothing. */
const NO_ROUTER: Router<unknown, unknown> = {
  open() {},
  route() {
    throw new Error('keyedDispatch: a message was routed before the dispatcher started');
  },
  discard: () => [],
  unfinished: () => [],
  close() {},
};

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
