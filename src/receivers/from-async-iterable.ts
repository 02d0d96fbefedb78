import {
  createReceiver,
  type Receiver,
  type ReceiverOptions,
  type ReceiverSink,
  type SettledListener,
  settledListenerOf,
} from '../receiver';
import { PullSession } from './pull-session';

/**
 * A receiver over an async iterable — an async generator, or a Node `Readable` in object mode. It
 * calls `next()` only while there is demand, one call at a time, so a stream is read only as fast as
 * messages finish (a `Readable` stays paused, and its own backpressure reaches the producer). On
 * cancellation it calls the iterator's `return()`, which destroys a `Readable`.
 */
export function fromAsyncIterable<T>(
  iterable: AsyncIterable<T>,
  options: ReceiverOptions<T> = {},
): Receiver<T> {
  const onSettled = settledListenerOf('fromAsyncIterable', options);
  return createReceiver(
    (sink) => new AsyncIterableSession(iterable[Symbol.asyncIterator](), sink, onSettled),
    'fromAsyncIterable()',
  );
}

/** One subscription: a loop that calls `next()` once per unit of demand, never two calls at once. */
class AsyncIterableSession<T> extends PullSession<T> {
  /** The iterator has ended: nothing to return on close. */
  private exhausted = false;

  constructor(
    private readonly iterator: AsyncIterator<T>,
    sink: ReceiverSink<T>,
    onSettled: SettledListener<T> | undefined,
  ) {
    super(sink, onSettled);
    this.runLoop(() => this.pull());
  }

  private async pull(): Promise<void> {
    while (await this.whenDemand()) {
      const step = await this.iterator.next();
      if (step.done) {
        this.exhausted = true;
        this.complete();
        return;
      }
      // Refused once cancelled: the item is dropped with the rest of the source.
      this.deliver(step.value);
    }
  }

  protected override close(): void {
    // Ends the source (a Readable is destroyed). Not awaited: behind a `next()` that never settles, the
    // return would wait forever, and a cancellation must not; a rejection has nobody left to tell.
    if (!this.exhausted) this.iterator.return?.().catch(() => undefined);
  }
}
