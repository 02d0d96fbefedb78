import { KeyedExecutor } from 'keyed-dispatch';
import { type InteropObservable, type Observable, observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';

/**
 * Helpers of the operator-contract specs: RxJS's own operator specs, ported to `keyedDispatch` under
 * the mapping one key = `concatMap`, distinct keys = `mergeMap`, `maxInFlight: N` = `mergeMap(…, N)`.
 */

/** A TestScheduler that compares frames the way RxJS's own specs do (deep equality). */
export function testScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

/**
 * A fresh two-lane executor for each test of the enclosing `describe`, closed after it. Call it in the
 * `describe` body; the returned function gives the current test's executor.
 */
export function executorPerTest(): () => KeyedExecutor {
  let executor: KeyedExecutor | undefined;
  beforeEach(() => {
    executor = new KeyedExecutor({ lanes: 2 });
  });
  afterEach(async () => {
    await executor?.close();
    executor = undefined;
  });
  return () => {
    if (executor === undefined) throw new Error('executorPerTest: no test is running');
    return executor;
  };
}

/** The key of the `concatMap` mapping: every message has the same key. */
export const oneKey = (): string => 'k';

/** The key of the `mergeMap` mapping: a new key for every message (a counter of its own per call). */
export function distinctKeys(): () => number {
  let next = 0;
  return () => next++;
}

/** `n` copies of `value`: the inner arrays of RxJS's specs. */
export function arrayRepeat<T>(value: T, times: number): T[] {
  return Array.from({ length: times }, () => value);
}

/**
 * The same Observable as seen from another library: no `lift`, no `instanceof Observable`, only the
 * interop symbol. Subscriptions still reach `source` (so a cold observable records them).
 */
export function asInteropObservable<T>(source: Observable<T>): InteropObservable<T> {
  const foreign = {
    [observable as symbol]: () => ({ subscribe: (observer: any) => source.subscribe(observer) }),
  };
  return foreign as unknown as InteropObservable<T>;
}
