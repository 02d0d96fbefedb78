import { Observable } from 'rxjs';

/**
 * The pull protocol between a transport receiver and `keyedDispatch`.
 *
 * `keyedDispatch` opens a receiver with a sink, asks for messages with `request(n)` and reports each
 * message's outcome with `settle` once its handler has finished — that is where transports
 * acknowledge. A receiver delivers at most what was requested and nothing before the first request.
 */
export const openReceiver: unique symbol = Symbol.for('keyed-dispatch.openReceiver') as never;

/** How a message's handling ended. `failed` carries the error to `settle`. */
export type Settlement = 'done' | 'failed';

/** Where a receiver delivers messages. */
export interface ReceiverSink<T> {
  next(message: T): void;
  error(err: unknown): void;
  complete(): void;
  /**
   * Removes queued messages that `matches` accepts and that have not started, returning them; they
   * are never settled (a transport leaves them for redelivery, e.g. on a Kafka partition revoke).
   */
  discard(matches: (message: T) => boolean): T[];
  /**
   * Settling a delivered message failed: its acknowledgement or the `onSettled` hook threw or rejected.
   * The output errors with `err`, even after `complete` (which ends deliveries, not settlements).
   */
  settleFailed(err: unknown): void;
}

/** A receiver's side of one subscription. */
export interface ReceiverSession<T> {
  /** Asks for `n` more messages (a positive integer, or `Infinity` for no limit). */
  request(n: number): void;
  /** `message`'s handler finished: acknowledge it (`done`) or report the failure (`failed`). */
  settle(message: T, outcome: Settlement, error?: unknown): void;
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
  [openReceiver](sink: ReceiverSink<T>): ReceiverSession<T>;
}

export function isPullable<T>(source: unknown): source is Pullable<T> {
  return typeof (source as Partial<Pullable<T>> | null)?.[openReceiver] === 'function';
}

/**
 * Base class of receivers: pullable by `keyedDispatch`, and a plain Observable for everything else.
 * Subscribed as a plain Observable (for instance behind another operator), a receiver has no window to
 * honour: it requests without limit and settles each message as `done` as soon as the subscriber's
 * `next` returns — acknowledgement on receipt. Put `keyedDispatch` directly after a receiver to get
 * acknowledgement after handling and backpressure.
 */
export abstract class Receiver<T> extends Observable<T> implements Pullable<T> {
  constructor() {
    super((subscriber) => {
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

  abstract [openReceiver](sink: ReceiverSink<T>): ReceiverSession<T>;
}

/** A receiver whose every subscription opens its session with `open`. */
export function createReceiver<T>(open: (sink: ReceiverSink<T>) => ReceiverSession<T>): Receiver<T> {
  return new OpenedBy(open);
}

class OpenedBy<T> extends Receiver<T> {
  constructor(private readonly open: (sink: ReceiverSink<T>) => ReceiverSession<T>) {
    super();
  }

  [openReceiver](sink: ReceiverSink<T>): ReceiverSession<T> {
    return this.open(sink);
  }
}

/** Optional hook of the built-in receivers: told each message's outcome (e.g. to acknowledge it). */
export type SettledListener<T> = (message: T, outcome: Settlement, error?: unknown) => void;

/** Options of the built-in receivers (`fromIterable`, `fromAsyncIterable`, `LocalBus.receive`). */
export interface ReceiverOptions<T> {
  /** Told each message's outcome once its handler has finished. */
  onSettled?: SettledListener<T>;
}
