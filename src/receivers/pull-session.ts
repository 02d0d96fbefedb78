import { callUser } from '../internal/call-user';
import { followOnce, isPromiseLike } from '../internal/thenable';
import { warnCallbackFailed } from '../internal/warn';
import { wrongAnswer } from '../internal/wrong-answer';
import type { ReceiverSession, ReceiverSink, SettledListener, Settlement } from '../receiver';
import {
  type ResolvedTransportHealth,
  type TransportFault,
  type TransportOperation,
  TransportUnreachableError,
} from '../transport-fault';

/** What `PullSession.take()` returns when no message is ready now. */
export const NOTHING: unique symbol = Symbol('keyed-dispatch.nothing');

/**
 * The receiver core: one subscription's side of the pull protocol, shared by every built-in receiver.
 * It keeps the demand and never delivers beyond it, wakes an async pull loop when demand comes, sends one
 * terminal signal, settles each message (the transport's acknowledgement, then `onSettled`) and closes
 * the transport once. A transport extends it with only what is its own:
 *
 * - where messages come from: `take()`, for a source that has them at hand (an iterator, a queue), called
 *   while there is demand; or an async loop started with `runLoop`, which waits with `whenDemand()` and
 *   hands messages over with `deliver`;
 * - `acknowledge(message, outcome, error)`: tells the transport a message's outcome;
 * - `stopFetching()`: stops asking the transport for more, once intake stops;
 * - `close()`: releases the transport, once, when the session ends.
 *
 * The session ends at the first of `complete()` (the source ended), `fail(err)` (it broke), `cancel()`
 * (the consumer left) and the end of `closeGracefully(ms)`; later signals are ignored. Settlements are
 * always accepted: messages delivered before the end may settle after it.
 */
export abstract class PullSession<T> implements ReceiverSession<T> {
  /** Counts a message as delivered before handing it over, and takes a `request` made from within: see `ReceiverSession`. */
  readonly reentrant: boolean = true;

  /** Requested and not yet delivered (`Infinity`: no limit). */
  #requested = 0;
  /** Delivered and not yet settled or discarded: what a graceful close waits for. */
  #unsettled = 0;
  /** A message is being handed to the sink: a request made from inside only adds demand. */
  #handingOver = false;
  /** Nothing more is delivered: the session ended, or a graceful close began. */
  #intakeStopped = false;
  /** Ends the pull loop's current wait. */
  #wakeUp: (() => void) | null = null;
  /** Ends a graceful close's wait for the delivered messages to settle. */
  #settledAll: (() => void) | null = null;
  /** The transport's close; set once the session has ended. */
  #closing: Promise<void> | null = null;
  /** The output errored or the consumer cancelled: nothing more is signalled to the sink. */
  #silenced = false;
  /** A graceful close under way. */
  #closingGracefully: Promise<void> | null = null;
  /** When the transport began failing without a success since (ms since the epoch), or null. */
  #failingSince: number | null = null;
  /** `onTransportError`, until it throws or rejects once. */
  #transportErrorListener: ((fault: TransportFault) => void) | undefined;
  /** Fails the session once the transport has kept failing for `maxUnreachableMs`. */
  #unreachableTimer: ReturnType<typeof setTimeout> | undefined = undefined;

  readonly #sink: ReceiverSink<T>;
  readonly #onSettled: SettledListener<T> | undefined;
  /** The receiver's name and health options, for transports that report failures they survive. */
  readonly #health: (ResolvedTransportHealth & { readonly receiver: string }) | undefined;

  constructor(
    sink: ReceiverSink<T>,
    onSettled?: SettledListener<T>,
    health?: ResolvedTransportHealth & { readonly receiver: string },
  ) {
    this.#sink = sink;
    this.#onSettled = onSettled;
    this.#health = health;
    this.#transportErrorListener = health?.onTransportError;
  }

  // ReceiverSession

  request(n: number): void {
    if (this.#intakeStopped) return;
    this.#requested += n;
    this.wake();
    this.drain();
  }

  /**
   * Acknowledges with the transport, then tells `onSettled` (a promise it returns is waited for before
   * the message counts as settled). A throwing (or rejected) acknowledgement and a throwing (or
   * rejecting) `onSettled` never reach the caller: they error the output, as a handler error does —
   * also after the source completed, since the consumer is still settling what was delivered; once the
   * output has ended or the consumer has cancelled, there is nobody left to tell and a process warning
   * (`KeyedDispatchWarning`) reports them.
   */
  settle(message: T, outcome: Settlement, error?: unknown): void {
    // Nothing to tell (the transport does not acknowledge, nobody listens): it is only counted.
    if (this.acknowledge === acknowledgeNothing && this.#onSettled === undefined) this.#countSettled();
    else this.#acknowledge(message, outcome, error);
  }

  /** `settle` with someone to tell: out of `settle`, which every message runs through. */
  #acknowledge(message: T, outcome: Settlement, error: unknown): void {
    let acknowledged: void | Promise<void>;
    try {
      acknowledged = this.acknowledge(message, outcome, error);
    } catch (err) {
      this.#acknowledgeFailed(err);
      return;
    }
    if (acknowledged instanceof Promise) {
      acknowledged.then(
        () => this.#acknowledged(message, outcome, error),
        (err: unknown) => this.#acknowledgeFailed(err),
      );
    } else this.#acknowledged(message, outcome, error);
  }

  /**
   * Stops delivery and closes the transport, once; later calls return the same promise. It settles when
   * the transport's `close()` has, rejecting with its error for whoever awaits it (the runtime reports
   * it); a caller may also ignore it, as the rejection is already handled here.
   */
  cancel(): Promise<void> {
    this.#silenced = true;
    return this.#end();
  }

  /**
   * Graceful close, the transports' `close()`: stops intake, gives back the queued messages that have not
   * started (never settled: the transport redelivers them), waits up to `timeoutMs` for the delivered
   * ones to settle, completes the output and closes the transport. Resolves once closed.
   */
  closeGracefully(timeoutMs: number): Promise<void> {
    if (this.#closing !== null) return this.#closing;
    this.#closingGracefully ??= this.#completeWhenSettled(timeoutMs);
    return this.#closingGracefully;
  }

  /** The session has ended (completed, failed, cancelled or closed). */
  get ended(): boolean {
    return this.#closing !== null;
  }

  /** Why the session takes no work now (see `ReceiverSession`): its intake stopped, else nothing. */
  notReadyBecause(): string | undefined {
    return this.#intakeStopped ? 'its receiver takes no more messages (it ended or is closing)' : undefined;
  }

  /** A delivered message waits outside the dispatcher's window (its key at its share): see `ReceiverSession`. */
  parked(_message: T): void {}

  /** A parked message entered the window. */
  unparked(_message: T): void {}

  // What a transport plugs in

  /** A message ready now, or `NOTHING`. Called only while there is demand. A throw fails the session. */
  protected take(): T | typeof NOTHING {
    return NOTHING;
  }

  /** Tells the transport a message's outcome; a returned promise delays `onSettled` until it resolves. */
  protected acknowledge(_message: T, _outcome: Settlement, _error: unknown): void | Promise<void> {}

  /**
   * Stops fetching, once, when intake stops: at the start of a graceful close, or when the session ends.
   * Messages delivered before may still settle.
   */
  protected stopFetching(): void {}

  /** Releases the transport (connection, iterator), once, when the session ends, after `stopFetching`. */
  protected close(): void | Promise<void> {}

  // What a transport calls

  /** Requested and not yet delivered (`Infinity`: no limit). */
  protected get demand(): number {
    return this.#requested;
  }

  /** Nothing more is delivered: a pull loop ends. */
  protected get stopped(): boolean {
    return this.#intakeStopped;
  }

  /** A message is being handed over right now (a call from inside the sink). */
  protected get delivering(): boolean {
    return this.#handingOver;
  }

  /**
   * Hands over what `take()` has ready while there is demand. Call it when messages arrive; a call from
   * inside a delivery returns at once (the loop under way picks up what is new).
   */
  protected drain(): void {
    if (this.#handingOver) return;
    this.#handingOver = true;
    try {
      while (this.#requested > 0 && !this.#intakeStopped) {
        const message = this.take();
        if (message === NOTHING) break;
        this.#requested--;
        this.#unsettled++;
        this.#sink.next(message);
      }
    } catch (err) {
      this.fail(err);
    } finally {
      this.#handingOver = false;
    }
  }

  /**
   * Hands `message` over now if the session can take it: intake open, demand left and no other delivery
   * under way. Returns false otherwise: keep the message (queue it for `take()`) or leave it
   * unacknowledged for the transport to redeliver.
   */
  protected deliver(message: T): boolean {
    if (this.#requested <= 0 || this.#intakeStopped || this.#handingOver) return false;
    this.#requested--;
    this.#unsettled++;
    this.#handingOver = true;
    try {
      this.#sink.next(message);
    } catch (err) {
      this.fail(err);
    } finally {
      this.#handingOver = false;
    }
    return true;
  }

  /**
   * Hands back `message`, taken from a source that cannot deliver it again (an iterator, an in-process
   * queue) once `deliver` refused it or intake stopped: see `ReceiverSink.undelivered`. Never settled.
   */
  protected undelivered(message: T): void {
    this.#sink.undelivered?.(message);
  }

  /** Starts an async pull loop. What it throws fails the session, unless intake had stopped (a close tears its connection down). */
  protected runLoop(loop: () => Promise<void>): void {
    loop().catch((err: unknown) => {
      if (!this.#intakeStopped) this.fail(err);
    });
  }

  /** Resolves true once there is demand (at once if there is), false once intake has stopped. */
  protected async whenDemand(): Promise<boolean> {
    while (this.#requested <= 0 && !this.#intakeStopped) await this.wait();
    return !this.#intakeStopped;
  }

  /**
   * Waits for the next wake-up: new demand, intake stopping, the transport's own `wake()`, or `timeoutMs`.
   * One waiter at a time (one pull loop per session); check your condition again after it resolves.
   */
  protected wait(timeoutMs = Number.POSITIVE_INFINITY): Promise<void> {
    if (this.#intakeStopped) return Promise.resolve();
    return waitFor((wake) => {
      this.#wakeUp = wake;
    }, timeoutMs);
  }

  /** Ends the pull loop's current wait early. */
  protected wake(): void {
    const wakeUp = this.#wakeUp;
    if (wakeUp === null) return;
    this.#wakeUp = null;
    wakeUp();
  }

  /**
   * Takes back queued messages that `matches` accepts and that have not started; they are never settled.
   * `matches` is asked once per message and must answer a boolean (an async function answers a
   * Promise, which would read as true): anything else is a `TypeError`. A `matches` that throws or
   * answers otherwise errors the output, as a failed settlement does, also after the source completed:
   * the dispatcher's count of what it holds would be wrong from there on.
   */
  protected discard(matches: (message: T) => boolean): T[] {
    let discarded: T[];
    try {
      discarded = this.#sink.discard(booleanAnswers(matches));
    } catch (err) {
      this.#settlementFailed(err);
      return [];
    }
    if (discarded.length > 0) {
      this.#unsettled -= discarded.length;
      if (this.#unsettled <= 0) this.#settledAll?.();
    }
    return discarded;
  }

  /** The source has ended: completes the output (once) and closes the transport. */
  protected complete(): void {
    if (this.#closing !== null) return;
    this.#end();
    this.#sink.complete();
  }

  /** The source broke: errors the output (once) and closes the transport. */
  protected fail(err: unknown): void {
    if (this.#closing !== null) return;
    this.#silenced = true;
    this.#end();
    this.#sink.error(err);
  }

  /**
   * Stops delivery and fetching, keeping the transport open so that delivered messages can still settle
   * and be acknowledged; `cancel` (or the end of the session) closes it. Idempotent.
   */
  stopIntake(): void {
    if (this.#intakeStopped) return;
    this.#intakeStopped = true;
    this.wake();
    this.stopFetching();
  }

  /**
   * The transport failed and the transport code goes on (it retries): counts it in the dispatcher's
   * stats, tells `onTransportError`, and, once failures have lasted `maxUnreachableMs` with no
   * `transportRecovered()` in between, errors the output with a `TransportUnreachableError`.
   */
  protected transportFailed(operation: TransportOperation, error: unknown): void {
    if (this.#closing !== null) return;
    const health = this.#health;
    const now = Date.now();
    this.#failingSince ??= now;
    const fault: TransportFault = {
      operation,
      error,
      receiver: health?.receiver ?? this.constructor.name,
      failingSince: this.#failingSince,
    };
    this.#sink.transportFault?.(fault);
    const listener = this.#transportErrorListener;
    if (listener !== undefined)
      callUser(listener, fault, undefined, undefined, this.#transportErrorListenerFailed);
    if (health === undefined) return;
    clearTimeout(this.#unreachableTimer);
    const left = this.#failingSince + health.maxUnreachableMs - now;
    this.#unreachableTimer = setTimeout(
      () => {
        if (this.#failingSince !== null)
          this.fail(new TransportUnreachableError(fault, health.maxUnreachableMs));
      },
      Math.max(0, left),
    );
  }

  /** The transport answered (a fetch or commit succeeded): failures so far no longer count. */
  protected transportRecovered(): void {
    if (this.#failingSince === null) return;
    this.#failingSince = null;
    clearTimeout(this.#unreachableTimer);
    this.#unreachableTimer = undefined;
    this.#sink.transportRecovered?.();
  }

  // Internals

  /** Ends the session once: stops a graceful close's wait, stops intake, closes the transport. */
  #end(): Promise<void> {
    if (this.#closing === null) {
      // Set before any hook runs, so a signal from inside one sees the session ended.
      let closed!: (transportClosed: Promise<void>) => void;
      this.#closing = new Promise<void>((resolve) => {
        closed = resolve;
      });
      // Whoever awaits `cancel()` sees a close error; nobody else may, so it must not go unhandled.
      this.#closing.catch(() => undefined);
      this.#settledAll?.();
      closed(this.#closeTransport());
    }
    return this.#closing;
  }

  /** Stops intake and closes the transport; a throw of either becomes the promise's rejection. */
  async #closeTransport(): Promise<void> {
    clearTimeout(this.#unreachableTimer);
    try {
      this.stopIntake();
    } finally {
      // Released even when stopping the fetch threw.
      await this.close();
    }
  }

  async #completeWhenSettled(timeoutMs: number): Promise<void> {
    try {
      this.stopIntake();
      this.discard(everything);
      if (this.#unsettled > 0) {
        await waitFor((wake) => {
          this.#settledAll = wake;
        }, timeoutMs);
      }
    } catch (err) {
      this.fail(err);
    }
    this.#settledAll = null;
    this.complete();
    return this.#end();
  }

  #acknowledged(message: T, outcome: Settlement, error: unknown): void {
    const onSettled = this.#onSettled;
    const told =
      onSettled === undefined
        ? undefined
        : callUser(onSettled, message, outcome, error, this.#onSettledFailed);
    // An async `onSettled` is waited for, as an acknowledgement is: its rejection still errors the output.
    if (isPromiseLike(told)) followOnce(told, this.#countSettledBound, this.#countSettledBound);
    else this.#countSettled();
  }

  readonly #countSettledBound = (): void => this.#countSettled();

  /** A throwing or rejecting `onSettled` errors the output (see `settle`); bound once, not per message. */
  readonly #onSettledFailed = (err: unknown): void => this.#settlementFailed(err);

  /**
   * A throwing or rejecting `onTransportError` must not break the transport's retry loop: it is no
   * longer called by this session, and a process warning says why.
   */
  readonly #transportErrorListenerFailed = (err: unknown): void => {
    // Once: calls made before a rejection arrived may reject too.
    if (this.#transportErrorListener === undefined) return;
    this.#transportErrorListener = undefined;
    warnCallbackFailed('onTransportError', 'is no longer called', err);
  };

  #acknowledgeFailed(err: unknown): void {
    this.#countSettled();
    this.#settlementFailed(err);
  }

  /**
   * Errors the output unless it already ended or the consumer cancelled (see `settle`); then nobody is
   * left to error (an async `onSettled` rejecting after the output completed), and a process warning says so.
   */
  #settlementFailed(err: unknown): void {
    if (this.#silenced) {
      warnCallbackFailed('a settlement (acknowledgement or onSettled)', 'came after the output ended', err);
      return;
    }
    this.#silenced = true;
    this.#end();
    this.#sink.settleFailed(err);
  }

  #countSettled(): void {
    if (--this.#unsettled === 0) this.#settledAll?.();
  }
}

/**
 * The base `acknowledge`, which tells the transport nothing: held once, as reading a class's `prototype`
 * is a lookup. Read in a call marked pure, so a bundle that never uses `PullSession` leaves it out.
 */
const acknowledgeNothing = /* @__PURE__ */ baseAcknowledge();

function baseAcknowledge(): unknown {
  return (PullSession.prototype as unknown as { acknowledge: unknown }).acknowledge;
}

const everything = (): boolean => true;

/** `matches`, refusing an answer that is not a boolean rather than reading it by truthiness. */
function booleanAnswers<T>(matches: (message: T) => boolean): (message: T) => boolean {
  if (matches === everything) return matches;
  return (message) => {
    const answer: unknown = matches(message);
    if (typeof answer === 'boolean') return answer;
    throw wrongAnswer('PullSession.discard: `matches`', answer, 'for a message', 'a boolean');
  };
}

/** Resolves when the wake function handed to `register` is called, or after `timeoutMs` (never for `Infinity`). */
function waitFor(register: (wake: () => void) => void, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = Number.isFinite(timeoutMs) ? setTimeout(resolve, timeoutMs) : undefined;
    register(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
