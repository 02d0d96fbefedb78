import { Observable } from 'rxjs';
import type { FailurePolicy } from './failure-policy';
import type { TransportFault } from './transport-fault';
import type { TransportLag } from './transport-lag';
import { functionOption, optionsObject } from './validate';

/**
 * The pull protocol between a transport receiver and `keyedDispatch`.
 *
 * `keyedDispatch` opens a receiver with a sink, asks for messages with `request(n)` and reports each
 * message's outcome with `settle` once its handler has finished — that is where transports
 * acknowledge. A receiver delivers at most what was requested and nothing before the first request.
 */
export const openReceiver: unique symbol = Symbol.for('keyed-dispatch.openReceiver') as never;

/**
 * How a message's handling ended: `done`, its handler completed; `dead-lettered`, its handler failed and
 * the failure policy's `deadLetter` dealt with it (the dead letter is its handling: acknowledge it);
 * `failed`, its handler failed and nothing dealt with it. `dead-lettered` and `failed` carry the error.
 */
export type Settlement = 'done' | 'dead-lettered' | 'failed';

/** Where a receiver delivers messages. */
export interface ReceiverSink<T> {
  /** Delivers one message; call only within the demand `request` gave. */
  next(message: T): void;
  /** Ends the stream with an error: the transport failed. */
  error(err: unknown): void;
  /** Ends the stream: no more messages will come. */
  complete(): void;
  /**
   * Removes queued messages that `matches` accepts and that have not started, returning them; they
   * are never settled (a transport leaves them for redelivery, e.g. on a Kafka partition revoke).
   */
  discard(matches: (message: T) => boolean): T[];
  /**
   * Hands back a message the receiver took from its source after intake stopped (a read that was under
   * way) and that its source cannot deliver again (an iterator, an in-process queue): never admitted,
   * never settled. A `DispatchRuntime` stop reports it in `leftForRedelivery`; other sinks may drop it.
   * Optional.
   */
  undelivered?(message: T): void;
  /**
   * Settling a delivered message failed: its acknowledgement or the `onSettled` hook threw or rejected,
   * or a predicate taking delivered messages back (`discard`) threw. The output errors with `err`, even
   * after `complete` (which ends deliveries, not settlements).
   */
  settleFailed(err: unknown): void;
  /**
   * The transport failed and the receiver goes on (it retries): counted in the dispatcher's stats.
   * Optional for other sinks.
   */
  transportFault?(fault: TransportFault): void;
  /** The transport answered again after `transportFault`s: the failing streak is over. Optional. */
  transportRecovered?(): void;
}

/** A receiver's side of one subscription. */
export interface ReceiverSession<T> {
  /** Asks for `n` more messages (a positive integer, or `Infinity` for no limit). */
  request(n: number): void;
  /**
   * True when the session may be re-entered from inside `sink.next`: it counts a message as delivered
   * before handing it over, and takes a `request` or a `settle` made from within the handover. Then a
   * handler may start inside `sink.next` (a new key's message, in the lane's running turn) instead of
   * after it. `PullSession` is; a session of your own that leaves this out is never re-entered so.
   * Optional.
   */
  readonly reentrant?: boolean;
  /**
   * The failure policy for this session's messages when the dispatcher was given none (no
   * `failurePolicy` option). The transport receivers and `LocalBus` give one that retries a failed
   * message in its key's mailbox until it succeeds, so a handler failure never errors the output of a
   * consumer that must keep running. Optional: without it, a handler failure errors the output (RxJS
   * semantics), as with a plain Observable.
   */
  readonly defaultFailurePolicy?: FailurePolicy<T, unknown>;
  /** `message`'s handler finished: acknowledge it (`done`) or report the failure (`failed`). */
  settle(message: T, outcome: Settlement, error?: unknown): void;
  /**
   * Told when a delivered message has to wait outside the dispatcher's window, because its key holds
   * its whole share (`maxPerKey`), and when it enters the window. A transport that can stop one source
   * of messages (a Kafka partition) may hold it meanwhile, so the others keep flowing. Optional.
   */
  parked?(message: T): void;
  /** A message `parked` reported has entered the window: its source may be released. Optional. */
  unparked?(message: T): void;
  /**
   * Where `message` came from, for errors about it: `topic 'orders' partition 3 offset 1234`, `stream
   * 'orders' entry 1700000000000-0`. Never throws. Optional.
   */
  describe?(message: T): string;
  /**
   * Why the transport cannot take work now (`'the consumer has not joined its group yet'`), or
   * undefined when it can: asked by health checks, never on the message path. Optional.
   */
  notReadyBecause?(): string | undefined;
  /**
   * How far the consumer is behind its transport now, per source (a Kafka partition, a Redis stream, a
   * JetStream consumer): what the dispatcher's stats show as `transportLag`. Called when the stats are
   * read, never per message, so it returns what it has at hand (a transport that must ask its broker asks
   * at an interval of its own). Must not throw: one that does counts as reporting none. Optional.
   */
  transportLag?(): readonly TransportLag[];
  /**
   * Stops delivery and keeps the transport open, so that the messages delivered before can still settle
   * and be acknowledged; `cancel` closes it afterwards. A graceful stop calls it, drains, then cancels.
   * Optional: without it, a graceful stop cancels at once.
   */
  stopIntake?(): void;
  /**
   * Stops delivery. Messages not settled stay unacknowledged, so a transport redelivers them; they may
   * still be settled after it. A transport that closes asynchronously returns a promise of its close,
   * which the runtime awaits within its stop deadline; other callers ignore it, so it must never
   * become an unhandled rejection (`PullSession` handles that).
   */
  cancel(): void | Promise<void>;
}

/** Anything `keyedDispatch` can pull from. */
export interface Pullable<T> {
  /** Opens one session that delivers to `sink`; `keyedDispatch` calls it once per subscription. */
  [openReceiver](sink: ReceiverSink<T>): ReceiverSession<T>;
}

/** Whether `source` is a receiver `keyedDispatch` can pull from (it has an `[openReceiver]` method). */
export function isPullable<T>(source: unknown): source is Pullable<T> {
  return typeof (source as Partial<Pullable<T>> | null)?.[openReceiver] === 'function';
}

/**
 * Base class of receivers: pullable by `keyedDispatch`, which acknowledges each message after its handler
 * finished. Subscribed as a plain Observable — directly, or behind any other operator (`map`, `filter`,
 * `merge`…) — a receiver has no window to honour and could only acknowledge each message on receipt, so
 * it refuses: the subscription errors at once with a `TypeError` that says how to fix it, without opening
 * the transport, pulling a message or settling anything. Transform messages in `keyedDispatch`'s `key`
 * and `handle` instead (see docs/model.md, "Transforming messages"), or opt into at-most-once delivery
 * explicitly with `acknowledgeOnReceipt()`.
 */
export abstract class Receiver<T> extends Observable<T> implements Pullable<T> {
  /**
   * `value instanceof Receiver` holds for the receivers of every copy of the library (its CommonJS and
   * ESM builds side by side), and for the prototypes of receiver classes that implement the pull
   * protocol: told by what every receiver has, the protocol's method (registered with `Symbol.for`),
   * `acknowledgeOnReceipt` and `subscribe`. Subclasses keep the plain prototype check. (No brand member
   * of its own: a computed class member would keep this class in bundles that never use it.)
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // biome-ignore lint/complexity/noThisInStatic: `this` is the class asked, a subclass unless Receiver.
    if (this !== Receiver) return Function.prototype[Symbol.hasInstance].call(this, value);
    const receiver = value as Partial<Receiver<unknown>>;
    return (
      isPullable(value) &&
      typeof receiver.acknowledgeOnReceipt === 'function' &&
      typeof receiver.subscribe === 'function'
    );
  }

  /** `name`: how errors name this receiver (`fromIterable()`); its class name by default. */
  constructor(name?: string) {
    super((subscriber) => {
      subscriber.error(new TypeError(notPipedStraight(name ?? this.constructor.name)));
    });
  }

  /** Opens one session that delivers to `sink`; `keyedDispatch` calls it once per subscription. */
  abstract [openReceiver](sink: ReceiverSink<T>): ReceiverSession<T>;

  /**
   * The explicit opt-in to **at-most-once** delivery: a plain Observable of this receiver's messages that
   * settles each one `done` as soon as its subscriber's `next` returns — acknowledgement on receipt,
   * before any handler ran, so a crash loses what was received and not yet handled. It requests without
   * limit (nothing backpressures the transport) and cancels the session on unsubscribe. Each subscription
   * opens a session of its own.
   */
  acknowledgeOnReceipt(): Observable<T> {
    return new Observable<T>((subscriber) => {
      const session: ReceiverSession<T> = this[openReceiver]({
        next: (message) => {
          subscriber.next(message);
          session.settle(message, 'done');
        },
        error: (err) => subscriber.error(err),
        complete: () => subscriber.complete(),
        discard: () => [],
        settleFailed: (err) => subscriber.error(err),
      });
      subscriber.add(() => session.cancel());
      session.request(Number.POSITIVE_INFINITY);
    });
  }
}

function notPipedStraight(name: string): string {
  return (
    `${name} must be piped straight into keyedDispatch, which acknowledges each message after its ` +
    'handler finished; it was subscribed as a plain Observable (directly, or behind another operator), ' +
    'which could only acknowledge each message on receipt. To deserialize, filter or enrich messages ' +
    "first, do it in keyedDispatch's `key` and `handle` (see docs/model.md, 'Transforming messages'); or " +
    "subscribe to the receiver's `.acknowledgeOnReceipt()` to accept at-most-once delivery (a crash " +
    'loses what was received and not yet handled).'
  );
}

/**
 * A receiver whose every subscription opens its session with `open`; `name` is how errors name it
 * (`fromIterable()`).
 */
export function createReceiver<T>(
  open: (sink: ReceiverSink<T>) => ReceiverSession<T>,
  name = 'createReceiver()',
): Receiver<T> {
  return new OpenedBy(open, name);
}

class OpenedBy<T> extends Receiver<T> {
  // Set in the constructor rather than declared as a method: see `Receiver`'s `Symbol.hasInstance`.
  declare readonly [openReceiver]: (sink: ReceiverSink<T>) => ReceiverSession<T>;

  constructor(open: (sink: ReceiverSink<T>) => ReceiverSession<T>, name: string) {
    super(name);
    this[openReceiver] = open;
  }
}

/** Optional hook of the built-in receivers: told each message's outcome (e.g. to acknowledge it). */
export type SettledListener<T> = (message: T, outcome: Settlement, error?: unknown) => void;

/** Options of the built-in receivers (`fromIterable`, `fromAsyncIterable`, `LocalBus.receive`). */
export interface ReceiverOptions<T> {
  /** Told each message's outcome once its handler has finished. */
  onSettled?: SettledListener<T>;
}

/** The `onSettled` of a receiver's options, checked: an options object with no other key, a function if given. */
export function settledListenerOf<T>(
  owner: string,
  options: ReceiverOptions<T>,
): SettledListener<T> | undefined {
  optionsObject(owner, options, ['onSettled'] satisfies Array<keyof ReceiverOptions<T>>);
  return options.onSettled === undefined ? undefined : functionOption(owner, 'onSettled', options.onSettled);
}
