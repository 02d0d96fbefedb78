/** Whether `value` is an object with a `then` method: what a handler may return instead of an Observable. */
export function isPromiseLike<V>(value: unknown): value is PromiseLike<V> {
  return value !== null && typeof value === 'object' && typeof (value as PromiseLike<V>).then === 'function';
}

/**
 * Follows a thenable that may not be a native Promise: only its first callback counts, whenever it
 * comes. It may call back synchronously, call both, or throw from `then` (reported as its error).
 */
export function followOnce<V>(
  input: PromiseLike<V>,
  onValue: (value: V) => void,
  onError: (err: unknown) => void,
): void {
  let called = false;
  try {
    input.then(
      (value) => {
        if (called) return;
        called = true;
        onValue(value);
      },
      (err) => {
        if (called) return;
        called = true;
        onError(err);
      },
    );
  } catch (err) {
    if (called) return;
    called = true;
    onError(err);
  }
}
