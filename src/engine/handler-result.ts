import { from, isObservable, Observable, type ObservableInput, type Observer, type Subscription } from 'rxjs';
import { textOf } from '../internal/text-of';
import { followOnce, isPromiseLike } from '../internal/thenable';

/**
 * RxJS's Observable class, read once: a CommonJS build reads each export of rxjs through a getter,
 * and this is checked for every handler result.
 */
const RxObservable = Observable;

const promiseThen = Promise.prototype.then;

/**
 * Who follows a handler's result. A Promise is followed with the two callbacks (a mailbox makes them
 * once and reuses them for every message); the observer is asked for only when the result is
 * something to subscribe to.
 */
export interface ResultFollower<R> {
  /** A Promise's or thenable's value: the result's one value, and its end. */
  readonly resolved: (value: R) => void;
  /**
   * The result failed: a rejection, a `then` that threw, or a result that is no `ObservableInput`
   * (called synchronously then).
   */
  readonly rejected: (err: unknown) => void;
  /** The observer of an Observable result (or an array, iterable, async iterable or stream). */
  observer(): Observer<R>;
}

/**
 * Follows what a handler returned: the one place that tells its forms apart (RxJS's `innerFrom` is the
 * model). A native Promise is followed with its own `then`, which calls back once and never
 * synchronously; another thenable only by its first callback, whenever it comes (a `then` that throws
 * rejects it); an Observable is subscribed as it is; anything else `from` accepts is converted by it;
 * the rest (a forgotten `return`, a number) is rejected with `notObservableInput`. Returns the
 * subscription of a subscribed result, to cancel it; null for the others.
 */
export function followResult<R>(
  input: ObservableInput<R>,
  key: unknown,
  follower: ResultFollower<R>,
): Subscription | null {
  if (input === undefined || input === null) {
    follower.rejected(notObservableInput(input, key));
    return null;
  }
  if (hasNativeThen<R>(input)) {
    try {
      input.then(follower.resolved, follower.rejected);
    } catch (err) {
      // Its `constructor` threw, or it inherits from a Promise without being one.
      follower.rejected(err);
    }
    return null;
  }
  // An Observable first, as RxJS's `from` does: the usual case, and it skips looking up a `then` it lacks.
  if (!(input instanceof RxObservable) && isPromiseLike<R>(input)) {
    followOnce(input, follower.resolved, follower.rejected);
    return null;
  }
  let source: Observable<R>;
  if (input instanceof RxObservable || isObservable(input)) source = input as Observable<R>;
  else {
    try {
      source = from(input);
    } catch {
      follower.rejected(notObservableInput(input, key));
      return null;
    }
  }
  const observer = follower.observer();
  try {
    return source.subscribe(observer);
  } catch (err) {
    // RxJS reports a throwing subscribe as an error; a foreign Observable may throw instead.
    observer.error(err);
    return null;
  }
}

/**
 * A handler result followed as a Promise: its `then` is the native one (a Promise, or a subclass that
 * keeps `then`).
 */
export function hasNativeThen<R>(input: unknown): input is Promise<R> {
  return (input as Promise<R>).then === promiseThen;
}

/** The failure of a handler that returned `value`, which is not an `ObservableInput`. */
export function notObservableInput(value: unknown, key: unknown): TypeError {
  const shown = value === null ? 'null' : typeof value;
  // `undefined` as such: the usual cause is a handler that forgot to `return`. No operator named: the
  // same mailbox runs keyedDispatch's and keyedBatchDispatch's handlers.
  return new TypeError(
    `\`handle\` returned ${shown} for key ${textOf(key)}; expected an ObservableInput ` +
      '(Observable, Promise, array or iterable). Return EMPTY or of(value) for handlers with nothing to emit.',
  );
}
