import type { AsyncClosable } from '../async-dispose';
import { openReceiver, Receiver, type ReceiverSession, type ReceiverSink } from '../receiver';
import { PullSession } from './pull-session';

/**
 * A receiver that a service can close on shutdown: `close()` closes each open subscription gracefully
 * (see `PullSession.closeGracefully`) and resolves once all are closed. A subscription opened after
 * `close()` completes at once. Each subscription opens its session with `open`.
 */
export class ClosableReceiver<T> extends Receiver<T> implements AsyncClosable {
  readonly #sessions = new Set<PullSession<T>>();
  #closing: Promise<void> | null = null;

  readonly #open: (sink: ReceiverSink<T>) => PullSession<T>;
  readonly #closeTimeoutMs: number;

  /**
   * `closeTimeoutMs`: how long `close()` waits for delivered messages to settle; `name`: how errors name
   * the receiver (`fromSpool()`), `ClosableReceiver` by default.
   */

  constructor(open: (sink: ReceiverSink<T>) => PullSession<T>, closeTimeoutMs: number, name?: string) {
    super(name);
    this.#open = open;
    this.#closeTimeoutMs = closeTimeoutMs;
  }

  /** Opens one session that delivers to `sink`; `keyedDispatch` calls it once per subscription. */
  [openReceiver](sink: ReceiverSink<T>): ReceiverSession<T> {
    if (this.#closing !== null) {
      // Closed: the subscription completes at once, without opening the transport.
      const closed = new NoSource(sink);
      void closed.closeGracefully(0);
      return closed;
    }
    const session = this.#open(sink);
    // Ended subscriptions are forgotten here, so a receiver subscribed again and again holds only live ones.
    for (const earlier of this.#sessions) if (earlier.ended) this.#sessions.delete(earlier);
    this.#sessions.add(session);
    return session;
  }

  /**
   * Stops intake on every subscription, lets delivered messages settle (up to the close timeout;
   * queued ones that have not started are left for redelivery), completes the outputs and closes the
   * transport. Resolves once everything is closed (rejects with a transport's close error); safe to
   * call more than once.
   */
  close(): Promise<void> {
    if (this.#closing === null) {
      const sessions = [...this.#sessions];
      this.#sessions.clear();
      this.#closing = Promise.all(sessions.map((s) => s.closeGracefully(this.#closeTimeoutMs))).then(
        () => undefined,
      );
    }
    return this.#closing;
  }

  /** `close()`, for `await using receiver = fromKafka(…)` and the like. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** A session with nothing to deliver and nothing to close. */
class NoSource<T> extends PullSession<T> {}
