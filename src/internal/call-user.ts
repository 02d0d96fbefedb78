import { followOnce, isPromiseLike } from './thenable';

/** What `callUser` returns when the user function threw (the error went to `onError`). */
export const THREW: unique symbol = Symbol('keyed-dispatch.threw');

/**
 * The one way into user code: calls `fn(a, b, c)` and routes a synchronous throw, a rejection of a
 * thenable it returns, and a thenable whose `then` throws to `onError`, once. Returns what `fn` returned
 * (a thenable too: its value is the caller's, its failure already goes to `onError`), or `THREW`.
 * `onError` must not throw; each caller names where a failure of its callback goes (the message's
 * failure, the output's error, a fault counted and reported) in its own documentation.
 */
export function callUser<A, B, C, R>(
  fn: (a: A, b: B, c: C) => R,
  a: A,
  b: B,
  c: C,
  onError: (error: unknown) => void,
): R | typeof THREW {
  let result: R;
  try {
    result = fn(a, b, c);
  } catch (err) {
    onError(err);
    return THREW;
  }
  if (isPromiseLike(result)) followOnce(result, ignore, onError);
  return result;
}

function ignore(): void {}
