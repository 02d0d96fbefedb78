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
    const source = Array.isArray(iterable) ? iterable : iterable[Symbol.iterator]();
    return new IterableSession(source, sink, onSettled);
  }, 'fromIterable()');
}

/**
 * One subscription: the iterator, pulled one item per unit of demand. An array is read by index: its
 * own iterator allocates a result object per item (garbage on the hot path).
 */
class IterableSession<T> extends PullSession<T> {
  /** The iterable's items, when it is an array (read by index), else null. */
  private readonly items: readonly T[] | null;
  private readonly iterator: Iterator<T> | null;
  private index = 0;
  /** The items ran out: nothing to return on close. */
  private exhausted = false;

  constructor(
    source: readonly T[] | Iterator<T>,
    sink: ReceiverSink<T>,
    onSettled: SettledListener<T> | undefined,
  ) {
    super(sink, onSettled);
    const isArray = Array.isArray(source);
    this.items = isArray ? source : null;
    this.iterator = isArray ? null : (source as Iterator<T>);
  }

  protected override take(): T | typeof NOTHING {
    const items = this.items;
    if (items !== null) {
      if (this.index < items.length) return items[this.index++] as T;
      return this.ranOut();
    }
    const step = (this.iterator as Iterator<T>).next();
    return step.done ? this.ranOut() : step.value;
  }

  private ranOut(): typeof NOTHING {
    this.exhausted = true;
    this.complete();
    return NOTHING;
  }

  protected override close(): void {
    // Stopped early: lets a generator run its `finally` blocks.
    if (!this.exhausted) this.iterator?.return?.();
  }
}
