import { openReceiver, Receiver, type ReceiverSession, type ReceiverSink, type SettledListener } from '../receiver';

export interface AsyncIterableReceiverOptions<T> {
  /** Told each message's outcome once its handler has finished. */
  onSettled?: SettledListener<T>;
}

/**
 * A receiver over an async iterable — an async generator, or a Node `Readable` in object mode. It
 * calls `next()` only while there is demand, one call at a time, so a stream is read only as fast as
 * messages finish (a `Readable` stays paused, and its own backpressure reaches the producer). On
 * cancellation it calls the iterator's `return()`, which destroys a `Readable`.
 */
export function fromAsyncIterable<T>(
  iterable: AsyncIterable<T>,
  options: AsyncIterableReceiverOptions<T> = {},
): Receiver<T> {
  return new AsyncIterableReceiver(iterable, options.onSettled);
}

class AsyncIterableReceiver<T> extends Receiver<T> {
  constructor(
    private readonly iterable: AsyncIterable<T>,
    private readonly onSettled: SettledListener<T> | undefined,
  ) {
    super();
  }

  [openReceiver](sink: ReceiverSink<T>): ReceiverSession<T> {
    const iterator = this.iterable[Symbol.asyncIterator]();
    const onSettled = this.onSettled;
    /** Requested and not yet delivered. */
    let demand = 0;
    /** True while a `next()` call is pending: never two at once. */
    let pulling = false;
    /** The iterator ended, failed or was cancelled. */
    let stopped = false;
    const pull = async () => {
      if (pulling) return;
      pulling = true;
      try {
        while (demand > 0 && !stopped) {
          const step = await iterator.next();
          if (stopped) return;
          if (step.done) {
            stopped = true;
            sink.complete();
            return;
          }
          demand--;
          sink.next(step.value);
        }
      } catch (err) {
        if (!stopped) {
          stopped = true;
          sink.error(err);
        }
      } finally {
        pulling = false;
      }
    };
    return {
      request(n) {
        demand += n;
        void pull();
      },
      settle(message, outcome, error) {
        onSettled?.(message, outcome, error);
      },
      cancel() {
        if (stopped) return;
        stopped = true;
        // Ends the source (a Readable is destroyed); a rejection here has nobody left to tell.
        iterator.return?.().catch(() => undefined);
      },
    };
  }
}
