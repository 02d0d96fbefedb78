/** The one `sleep`, `deferred` and `waitFor` of the specs. */

/** Resolves after `ms` milliseconds of real time. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A promise with its resolve and reject in hand. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(err: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * Resolves once `condition()` holds, checking every few milliseconds; rejects naming `what` if it does
 * not within `ms` (by default it waits as long as the test may run).
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  ms = Number.POSITIVE_INFINITY,
  what = 'the condition',
): Promise<void> {
  const giveUpAt = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > giveUpAt) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(2);
  }
}
