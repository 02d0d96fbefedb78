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

/** The error for a key selector that returned no key. */
export function noKey(key: unknown): TypeError {
  return new TypeError(
    `keyedDispatch: \`key\` returned ${describe(key)} for a message; every message needs a key`,
  );
}
