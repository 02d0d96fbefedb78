import { describe } from '../validate';
import { isPromiseLike } from './thenable';

/**
 * The `TypeError` for user code asked synchronously that answered `answer` instead of `expected`
 * (`retryable`, `random`, `transfer`, `matches`). A Promise it answered is nobody's to follow: its
 * rejection is handled here, so it is never an unhandled one.
 */
export function wrongAnswer(callback: string, answer: unknown, about: string, expected: string): TypeError {
  const promise = isPromiseLike(answer);
  if (promise) Promise.resolve(answer).catch(() => undefined);
  return new TypeError(
    `${callback} returned ${promise ? 'a Promise' : describe(answer)} ${about}; expected ${expected} (it is asked synchronously: an async function returns a Promise)`,
  );
}
