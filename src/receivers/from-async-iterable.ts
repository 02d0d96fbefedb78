import { callUser } from '../internal/call-user';
import {
  createReceiver,
  type Receiver,
  type ReceiverOptions,
  type ReceiverSink,
  type SettledListener,
  settledListenerOf,
} from '../receiver';
import { describe } from '../validate';
import { PullSession } from './pull-session';

/**
 * A receiver over an async iterable — an async generator, or a Node `Readable` in object mode. It
 * calls `next()` only while there is demand, one call at a time, so a stream is read only as fast as
 * messages finish (a `Readable` stays paused, and its own backpressure reaches the producer). On
 * cancellation it calls the iterator's `return()`, and destroys a `Readable` (an iterable with a
 * `destroy()` method), which ends a read waiting for data.
 */
export function fromAsyncIterable<T>(
  iterable: AsyncIterable<T>,
  options: ReceiverOptions<T> = {},
): Receiver<T> {
  if (typeof (iterable as Partial<AsyncIterable<T>> | null)?.[Symbol.asyncIterator] !== 'function') {
    throw new TypeError(
      `fromAsyncIterable: expected an async iterable (an object with a [Symbol.asyncIterator] method), got ${describe(iterable)}`,
    );
  }
  const onSettled = settledListenerOf('fromAsyncIterable', options);
  return createReceiver(
    (sink) => new AsyncIterableSession(iteratorOf(iterable), destroyerOf(iterable), sink, onSettled),
    'fromAsyncIterable()',
  );
}

/** One subscription: a loop that calls `next()` once per unit of demand, never two calls at once. */
class AsyncIterableSession<T> extends PullSession<T> {
  /** The iterator has ended: nothing to return on close. */
  private exhausted = false;
  /** The pull loop; it ends once the read under way, if any, has ended. */
  private reading: Promise<void> = Promise.resolve();

  constructor(
    private readonly iterator: AsyncIterator<T>,
    /** Destroys the iterable when it is a Node `Readable`, else null. */
    private readonly destroy: (() => unknown) | null,
    sink: ReceiverSink<T>,
    onSettled: SettledListener<T> | undefined,
  ) {
    super(sink, onSettled);
    this.runLoop(() => {
      this.reading = this.pull();
      return this.reading;
    });
  }

  /**
   * A throw or rejection of `next()`, or of a result's `done` or `value` getter, is the source's error:
   * awaited here, it fails the session (the output errors with it) as one failure, whatever the thenable.
   */
  private async pull(): Promise<void> {
    while (await this.whenDemand()) {
      const step: unknown = await this.iterator.next();
      if ((typeof step !== 'object' && typeof step !== 'function') || step === null) {
        throw new TypeError(
          `fromAsyncIterable: the iterator's next() resolved to ${describe(step)}; expected an iterator result, an object { done, value }`,
        );
      }
      const { done, value } = step as IteratorResult<T>;
      if (done) {
        this.exhausted = true;
        this.complete();
        return;
      }
      // Read while intake stopped: the iterator will not yield it again, so it is handed back, not dropped.
      if (!this.deliver(value)) this.undelivered(value);
    }
  }

  /**
   * Ends the source without waiting for it: a `return()` queues behind a `next()` under way, which may
   * wait for data that never comes, so a `Readable` is destroyed too, which ends that read at once. What
   * either throws or rejects has nobody left to tell. Resolves once the read under way has ended, so its
   * item has been handed over or back; the runtime awaits that within its stop deadline, other callers
   * ignore it.
   */
  protected override close(): Promise<void> {
    if (!this.exhausted) {
      if (this.destroy !== null) callUser(this.destroy, undefined, undefined, undefined, ignore);
      callUser(returnOf, this.iterator, undefined, undefined, ignore);
    }
    return this.reading.then(ignore, ignore);
  }
}

/** A new iterator of `iterable`; one without `next()` errors the output (a throw of the opening does). */
function iteratorOf<T>(iterable: AsyncIterable<T>): AsyncIterator<T> {
  const iterator: unknown = iterable[Symbol.asyncIterator]();
  if (typeof (iterator as Partial<AsyncIterator<T>> | null)?.next !== 'function') {
    throw new TypeError(
      `fromAsyncIterable: [Symbol.asyncIterator]() returned ${describe(iterator)}; expected an async iterator, an object with a next() method`,
    );
  }
  return iterator as AsyncIterator<T>;
}

/** How to destroy `iterable` when it is a Node `Readable` (it has `destroy()`), else null. */
function destroyerOf(iterable: unknown): (() => unknown) | null {
  const destroy = (iterable as { destroy?: unknown }).destroy;
  return typeof destroy === 'function' ? () => destroy.call(iterable) : null;
}

function returnOf<T>(iterator: AsyncIterator<T>): unknown {
  return iterator.return?.();
}

function ignore(): void {}
