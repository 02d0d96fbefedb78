import {
  createReceiver,
  type Receiver,
  type ReceiverOptions,
  type ReceiverSink,
  type SettledListener,
  settledListenerOf,
} from '../receiver';
import { NOTHING, PullSession } from './pull-session';

/**
 * A receiver over a synchronous iterable (an array, a generator): pulls exactly as many items as are
 * requested, so a generator of any length runs in bounded memory.
 */
export function fromIterable<T>(iterable: Iterable<T>, options: ReceiverOptions<T> = {}): Receiver<T> {
  const onSettled = settledListenerOf('fromIterable', options);
  return createReceiver((sink) => {
    const iterator = Array.isArray(iterable) ? arrayCursor<T>(iterable) : iterable[Symbol.iterator]();
    return new IterableSession(iterator, sink, onSettled);
  }, 'fromIterable()');
}

/** One subscription: the iterator, pulled one item per unit of demand. */
class IterableSession<T> extends PullSession<T> {
  /** The iterator has ended: nothing to return on close. */
  private exhausted = false;

  constructor(
    private readonly iterator: Iterator<T>,
    sink: ReceiverSink<T>,
    onSettled: SettledListener<T> | undefined,
  ) {
    super(sink, onSettled);
  }

  protected override take(): T | typeof NOTHING {
    const step = this.iterator.next();
    if (step.done) {
      this.exhausted = true;
      this.complete();
      return NOTHING;
    }
    return step.value;
  }

  protected override close(): void {
    // Stopped early: lets a generator run its `finally` blocks.
    if (!this.exhausted) this.iterator.return?.();
  }
}

/**
 * An iterator over an array that reuses one result object: the pull loop reads each result before the
 * next call, and an array's own iterator allocates a result per item (garbage on the hot path).
 */
function arrayCursor<T>(items: readonly T[]): Iterator<T> {
  let index = 0;
  const step = { value: undefined as T, done: false };
  return {
    next: () => {
      if (index < items.length) step.value = items[index++];
      else {
        step.value = undefined as T;
        step.done = true;
      }
      return step as IteratorResult<T>;
    },
  };
}
