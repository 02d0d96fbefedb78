import { isPromiseLike } from './internal/thenable';
import { describe } from './validate';

/**
 * What a message whose key selector failed is filed under: a key of its own, so that, with a failure
 * policy, its dead letter runs in a mailbox like any failed message's, and the window, the stats and a
 * graceful stop count it as usual. Its handler never runs: the policy sees `error` at once.
 */
export class KeyFailure {
  constructor(readonly error: unknown) {}

  toString(): string {
    return '(no key)';
  }
}

/** True for the key of a message whose key selector failed. */
export function isKeyFailure(key: unknown): key is KeyFailure {
  return key instanceof KeyFailure;
}

/** The error for a key selector that returned no key, or a Promise of one. */
export function noKey(key: unknown): TypeError {
  if (isPromiseLike(key)) {
    return new TypeError(
      'keyedDispatch: `key` returned a Promise for a message; it is called synchronously (an async selector would give every message a key of its own, and no order)',
    );
  }
  return new TypeError(
    `keyedDispatch: \`key\` returned ${describe(key)} for a message; every message needs a key`,
  );
}
