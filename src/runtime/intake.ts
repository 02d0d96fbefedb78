import { Observable, type Subscriber, type Subscription } from 'rxjs';
import { isPromiseLike } from '../internal/thenable';
import {
  createReceiver,
  isPullable,
  openReceiver,
  type Pullable,
  type ReceiverSession,
  type ReceiverSink,
} from '../receiver';

/**
 * Stands between a component's source and its dispatcher, so the runtime controls intake:
 * - the readiness barrier: demand the dispatcher asks for is held until `open()` (a plain source is
 *   subscribed only then), so every receiver is subscribed before any of them delivers;
 * - stopping: `stop()` stops the source's delivery and tells the dispatcher it has ended, so it
 *   completes once what it holds has finished; whatever the source still delivers is kept aside, never
 *   admitted. A receiver that can stop delivering without closing (`stopIntake`) stays open meanwhile,
 *   so what finishes during the drain is still acknowledged; it closes when the dispatcher ends.
 */
export class Intake<T> {
  /** The source as the dispatcher sees it. */
  readonly source: Observable<T>;
  /** Delivered after intake stopped: never admitted, never settled, left for redelivery. */
  readonly late: T[] = [];
  /** What the source threw or errored with while stopping (its cancellation, a late error). */
  readonly errors: unknown[] = [];
  /** Settles once the source's cancellation has finished, if it returned a promise. */
  cancellation: Promise<void> | null = null;
  /** The cancellation's promise has settled. */
  private cancellationSettled = false;
  /** Demand asked for before the barrier opened. */
  private heldDemand = 0;
  private opened = false;
  private stopped = false;
  private cancelled = false;
  /** The dispatcher, as the sink of a pullable source. */
  private sink: ReceiverSink<T> | null = null;
  /** The source's session, when it is pullable. */
  private session: ReceiverSession<T> | null = null;
  /** The dispatcher, as the subscriber of a plain source. */
  private subscriber: Subscriber<T> | null = null;
  /** A plain source's subscription, once the barrier opened. */
  private upstream: Subscription | null = null;

  constructor(private readonly upstreamSource: Observable<T>) {
    this.source = isPullable<T>(upstreamSource)
      ? createReceiver((sink) => this.connect(sink, upstreamSource), "A runtime component's receiver")
      : new Observable<T>((subscriber) => {
          this.subscriber = subscriber;
          if (this.opened) this.subscribePlain();
          return () => this.cancel();
        });
  }

  /** The dispatcher opened the pullable source. */
  connect(sink: ReceiverSink<T>, upstream: Pullable<T>): ReceiverSession<T> {
    this.sink = sink;
    const intake = this;
    this.session = upstream[openReceiver]({
      next(message) {
        if (intake.stopped) intake.late.push(message);
        else sink.next(message);
      },
      error(err) {
        if (intake.stopped) intake.errors.push(err);
        else sink.error(err);
      },
      complete() {
        if (!intake.stopped) sink.complete();
      },
      discard: (matches) => sink.discard(matches),
      // Taken from its source after intake stopped, and not to be had again: reported, not lost.
      undelivered: (message) => intake.late.push(message),
      settleFailed: (err) => sink.settleFailed(err),
      transportFault: (fault) => sink.transportFault?.(fault),
    });
    const session = this.session;
    return {
      request(n) {
        if (intake.stopped) return;
        if (intake.opened) session.request(n);
        else intake.heldDemand += n;
      },
      reentrant: session.reentrant === true,
      defaultFailurePolicy: session.defaultFailurePolicy,
      settle: (message, outcome, error) => session.settle(message, outcome, error),
      parked: (message) => session.parked?.(message),
      unparked: (message) => session.unparked?.(message),
      transportLag: () => session.transportLag?.() ?? [],
      ...(session.describe === undefined
        ? {}
        : { describe: (message: T) => (session.describe as (message: T) => string)(message) }),
      cancel: () => this.cancel(),
    };
  }

  /** Opens the barrier: passes on the demand held so far, or subscribes the plain source. */
  open(): void {
    if (this.opened || this.stopped) return;
    this.opened = true;
    if (this.session !== null && this.heldDemand > 0) {
      const n = this.heldDemand;
      this.heldDemand = 0;
      this.session.request(n);
    }
    if (this.subscriber !== null) this.subscribePlain();
  }

  /**
   * Stops intake and ends the dispatcher's input, which completes once drained. A receiver that can stop
   * delivering stays open until the dispatcher ends (it cancels it then); any other source is cancelled now.
   */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.session?.stopIntake !== undefined) this.stopDelivery(this.session);
    else this.cancel();
    if (this.sink !== null) this.sink.complete();
    else this.subscriber?.complete();
  }

  private stopDelivery(session: ReceiverSession<T>): void {
    try {
      session.stopIntake?.();
    } catch (err) {
      this.errors.push(err);
      this.cancel();
    }
  }

  /** The stop's deadline passed while the source was still closing: reported, no longer awaited. */
  noteUnfinishedCancellation(): void {
    if (this.cancellation !== null && !this.cancellationSettled) {
      this.errors.push(new Error('the source had not finished closing by the stop deadline'));
    }
  }

  private subscribePlain(): void {
    const subscriber = this.subscriber as Subscriber<T>;
    this.upstream = this.upstreamSource.subscribe({
      next: (message) => {
        if (this.stopped) this.late.push(message);
        else subscriber.next(message);
      },
      error: (err) => (this.stopped ? this.errors.push(err) : subscriber.error(err)),
      complete: () => {
        if (!this.stopped) subscriber.complete();
      },
    });
  }

  /** Cancels the source once; a throw is kept for the report instead of breaking the stop. */
  private cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    try {
      this.upstream?.unsubscribe();
      // A transport may close asynchronously; a returned promise is awaited within the stop's deadline.
      const result = this.session?.cancel();
      if (isPromiseLike(result)) {
        this.cancellation = Promise.resolve(result).then(
          () => {
            this.cancellationSettled = true;
          },
          (err) => {
            this.cancellationSettled = true;
            this.errors.push(err);
          },
        );
      }
    } catch (err) {
      this.errors.push(err);
    }
  }
}
