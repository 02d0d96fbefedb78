import {
  openReceiver,
  Receiver,
  type ReceiverOptions,
  type ReceiverSession,
  type ReceiverSink,
  type SettledListener,
} from '../receiver';

/**
 * A receiver over a synchronous iterable (an array, a generator): pulls exactly as many items as are
 * requested, so a generator of any length runs in bounded memory.
 */
export function fromIterable<T>(iterable: Iterable<T>, options: ReceiverOptions<T> = {}): Receiver<T> {
  return new IterableReceiver(iterable, options.onSettled);
}

class IterableReceiver<T> extends Receiver<T> {
  constructor(
    private readonly iterable: Iterable<T>,
    private readonly onSettled: SettledListener<T> | undefined,
  ) {
    super();
  }

  [openReceiver](sink: ReceiverSink<T>): ReceiverSession<T> {
    const iterator = Array.isArray(this.iterable)
      ? arrayCursor<T>(this.iterable)
      : this.iterable[Symbol.iterator]();
    const onSettled = this.onSettled;
    /** Requested and not yet delivered. */
    let demand = 0;
    /** True while the pull loop is on the stack: a re-entrant request only adds demand. */
    let pulling = false;
    /** The iterator ended, failed or was cancelled. */
    let stopped = false;
    const pull = () => {
      if (pulling) return;
      pulling = true;
      try {
        while (demand > 0 && !stopped) {
          const step = iterator.next();
          if (step.done) {
            stopped = true;
            sink.complete();
            return;
          }
          demand--;
          sink.next(step.value);
        }
      } catch (err) {
        stopped = true;
        sink.error(err);
      } finally {
        pulling = false;
      }
    };
    return {
      request(n) {
        demand += n;
        pull();
      },
      settle(message, outcome, error) {
        onSettled?.(message, outcome, error);
      },
      cancel() {
        if (stopped) return;
        stopped = true;
        iterator.return?.();
      },
    };
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
