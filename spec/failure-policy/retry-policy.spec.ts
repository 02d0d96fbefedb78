import { fromIterable, KeyedExecutor, keyedDispatch, retryPolicy, type Settlement } from 'keyed-dispatch';
import { defer, EMPTY, of, throwError, timer } from 'rxjs';
import { map } from 'rxjs/operators';
import { TestScheduler } from 'rxjs/testing';

class VersionConflict extends Error {
  override name = 'VersionConflict';
}

interface Msg {
  key: string;
  id: string;
}

const msg = (key: string, id: string): Msg => ({ key, id });

function testScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

describe('retryPolicy on keyedDispatch', () => {
  it('runs a failed handler again after the backoff and emits what the successful attempt emits', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const executor = new KeyedExecutor({ lanes: 1 });
      let attempts = 0;
      const out = cold('a|', { a: msg('x', '1') }).pipe(
        keyedDispatch({
          executor,
          key: (m: Msg) => m.key,
          handle: (m: Msg) => (++attempts === 1 ? throwError(() => new VersionConflict()) : of(m.id)),
          failurePolicy: retryPolicy<Msg, string>({ maxAttempts: 3, backoff: { initialMs: 5, jitter: 0 } }),
        }),
      );
      expectObservable(out).toBe('-----(1|)');
    });
  });

  it('retries a handler that throws synchronously as well as one that errors later', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const executor = new KeyedExecutor({ lanes: 1 });
      let attempts = 0;
      const out = cold('a|', { a: msg('x', '1') }).pipe(
        keyedDispatch({
          executor,
          key: (m: Msg) => m.key,
          handle: (m: Msg) => {
            attempts++;
            if (attempts === 1) throw new VersionConflict();
            if (attempts === 2) return cold<string>('-#', undefined, new VersionConflict());
            return of(m.id);
          },
          failurePolicy: retryPolicy<Msg, string>({
            maxAttempts: 3,
            backoff: { initialMs: 2, factor: 1, jitter: 0 },
          }),
        }),
      );
      // throw at 0, retry at 2 errors at 3, retry at 5 succeeds.
      expectObservable(out).toBe('-----(1|)');
    });
  });

  /** Virtual times at which the attempts of one always-conflicting message start under `policy`. */
  function attemptStarts(policy: Parameters<typeof retryPolicy<Msg, string>>[0]): number[] {
    const scheduler = testScheduler();
    const startedAt: number[] = [];
    scheduler.run(({ cold }) => {
      const executor = new KeyedExecutor({ lanes: 1 });
      cold('a|', { a: msg('x', '1') })
        .pipe(
          keyedDispatch({
            executor,
            key: (m: Msg) => m.key,
            handle: () =>
              defer(() => {
                startedAt.push(scheduler.now());
                return throwError(() => new VersionConflict());
              }),
            failurePolicy: retryPolicy<Msg, string>(policy),
          }),
        )
        .subscribe();
    });
    return startedAt;
  }

  it('spaces attempts by initialMs × factor^(retry − 1), capped at maxMs', () => {
    const startedAt = attemptStarts({
      maxAttempts: 5,
      backoff: { initialMs: 10, factor: 2, maxMs: 30, jitter: 0 },
    });
    expect(startedAt).toEqual([0, 10, 30, 60, 90]);
  });

  it('draws each delay from delay × [1 − jitter, 1 + jitter] with the random source', () => {
    const draws = [0, 1, 0.5];
    const startedAt = attemptStarts({
      maxAttempts: 4,
      backoff: { initialMs: 100, factor: 1, jitter: 0.5 },
      random: () => draws.shift() as number,
    });
    const delays = startedAt.slice(1).map((t, i) => t - startedAt[i]);
    expect(delays).toEqual([50, 150, 100]);
  });

  it('gives a message whose attempts are spent to the dead letter, settles it as dead-lettered and goes on', () => {
    const settled: Array<[string, Settlement, unknown]> = [];
    const deadLetters: Array<[string, string, number, string]> = [];
    testScheduler().run(({ cold, expectObservable }) => {
      const executor = new KeyedExecutor({ lanes: 1 });
      const source = fromIterable([msg('bad', 'b1'), msg('ok', 'o1')], {
        onSettled: (m, outcome, error) =>
          settled.push([m.id, outcome, (error as Error | undefined)?.message]),
      });
      let attempt = 0;
      const out = source.pipe(
        keyedDispatch<Msg, string, string>({
          executor,
          key: (m: Msg) => m.key,
          handle: (m: Msg) =>
            m.key === 'bad'
              ? throwError(() => new VersionConflict(`conflict ${++attempt}`))
              : cold<string>('--(o|)'),
          failurePolicy: retryPolicy<Msg, string>({
            maxAttempts: 3,
            backoff: { initialMs: 3, jitter: 0 },
            deadLetter: (m, error, context) => {
              deadLetters.push([m.id, (error as Error).message, context.attempts, context.key as string]);
            },
          }),
        }),
      );
      // bad: attempts at 0, 3, 9 (3 + 6), then dead-lettered; ok: done at 2.
      expectObservable(out).toBe('--o------|');
    });
    expect(deadLetters).toEqual([['b1', 'conflict 3', 3, 'bad']]);
    expect(settled).toEqual([
      ['o1', 'done', undefined],
      ['b1', 'dead-lettered', 'conflict 3'],
    ]);
  });

  it('sends an error that retryable rejects to the dead letter after one attempt', () => {
    const deadLetters: Array<[string, number]> = [];
    testScheduler().run(({ cold, expectObservable }) => {
      const executor = new KeyedExecutor({ lanes: 1 });
      const out = cold('a|', { a: msg('x', '1') }).pipe(
        keyedDispatch({
          executor,
          key: (m: Msg) => m.key,
          handle: () => throwError(() => new TypeError('bad payload')),
          failurePolicy: retryPolicy<Msg, string>({
            maxAttempts: 5,
            retryable: (error) => error instanceof VersionConflict,
            deadLetter: (m, error, context) => {
              deadLetters.push([(error as Error).message, context.attempts]);
              expect(m.id).toBe('1');
            },
          }),
        }),
      );
      expectObservable(out).toBe('-|');
    });
    expect(deadLetters).toEqual([['bad payload', 1]]);
  });

  it('errors the output with a TypeError naming `retryable` when it returns something other than a boolean (an async one returns a Promise)', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const executor = new KeyedExecutor({ lanes: 1 });
      const out = cold('a|', { a: msg('x', '1') }).pipe(
        keyedDispatch({
          executor,
          key: (m: Msg) => m.key,
          handle: () => throwError(() => new VersionConflict()),
          failurePolicy: retryPolicy<Msg, string>({
            // An async retryable that rejects, which must not leave an unhandled rejection behind.
            retryable: (async () => {
              throw new Error('lookup failed');
            }) as never,
            deadLetter: () => EMPTY,
          }),
        }),
      );
      expectObservable(out).toBe(
        '#',
        undefined,
        new TypeError(
          'retryPolicy: `retryable` returned a Promise for key x; expected a boolean (it is asked synchronously: an async function returns a Promise)',
        ),
      );
    });
  });

  it("holds the key's later messages until the dead letter's output completes, then runs them in order", () => {
    const order: string[] = [];
    testScheduler().run(({ cold, expectObservable }) => {
      const executor = new KeyedExecutor({ lanes: 1 });
      const source = cold('(abc)|', { a: msg('k', 'k1'), b: msg('k', 'k2'), c: msg('k', 'k3') });
      const out = source.pipe(
        keyedDispatch({
          executor,
          key: (m: Msg) => m.key,
          handle: (m: Msg) => {
            order.push(m.id);
            return m.id === 'k1' ? throwError(() => new VersionConflict()) : of(m.id);
          },
          failurePolicy: retryPolicy<Msg, string>({
            maxAttempts: 2,
            backoff: { initialMs: 4, jitter: 0 },
            deadLetter: (m) => timer(3).pipe(map(() => order.push(`dead ${m.id}`))),
          }),
        }),
      );
      // k1 at 0 and 4, dead letter from 4 to 7, then k2 and k3.
      expectObservable(out).toBe('-------(bc|)', { b: 'k2', c: 'k3' });
    });
    expect(order).toEqual(['k1', 'k1', 'dead k1', 'k2', 'k3']);
  });

  it('settles the message as failed without a dead letter and goes on', () => {
    const settled: Array<[string, Settlement]> = [];
    testScheduler().run(({ expectObservable }) => {
      const executor = new KeyedExecutor({ lanes: 1 });
      const source = fromIterable([msg('k', 'k1'), msg('k', 'k2')], {
        onSettled: (m, outcome) => settled.push([m.id, outcome]),
      });
      const out = source.pipe(
        keyedDispatch({
          executor,
          key: (m: Msg) => m.key,
          handle: (m: Msg) => (m.id === 'k1' ? throwError(() => new VersionConflict()) : of(m.id)),
          failurePolicy: retryPolicy<Msg, string>({ maxAttempts: 2, backoff: { initialMs: 1, jitter: 0 } }),
        }),
      );
      expectObservable(out).toBe('-(b|)', { b: 'k2' });
    });
    expect(settled).toEqual([
      ['k1', 'failed'],
      ['k2', 'done'],
    ]);
  });

  it('errors the output when the dead letter itself fails', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const executor = new KeyedExecutor({ lanes: 1 });
      const out = cold('a|', { a: msg('x', '1') }).pipe(
        keyedDispatch({
          executor,
          key: (m: Msg) => m.key,
          handle: () => throwError(() => new VersionConflict()),
          failurePolicy: retryPolicy<Msg, string>({
            maxAttempts: 1,
            deadLetter: () => throwError(() => new Error('dead-letter queue unavailable')),
          }),
        }),
      );
      expectObservable(out).toBe('#', undefined, new Error('dead-letter queue unavailable'));
    });
  });

  it('errors the output on a handler error when no policy is given', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const executor = new KeyedExecutor({ lanes: 1 });
      const conflict = new VersionConflict('no policy');
      const out = cold('ab|', { a: msg('x', '1'), b: msg('y', '2') }).pipe(
        keyedDispatch({
          executor,
          key: (m: Msg) => m.key,
          handle: (m: Msg) => (m.key === 'x' ? throwError(() => conflict) : of(m.id)),
        }),
      );
      expectObservable(out).toBe('#', undefined, conflict);
    });
  });

  it('cancels a pending backoff when the output is unsubscribed', () => {
    let attempts = 0;
    testScheduler().run(({ cold, expectObservable }) => {
      const executor = new KeyedExecutor({ lanes: 1 });
      const out = cold('a', { a: msg('x', '1') }).pipe(
        keyedDispatch({
          executor,
          key: (m: Msg) => m.key,
          handle: () => {
            attempts++;
            return throwError(() => new VersionConflict());
          },
          failurePolicy: retryPolicy<Msg, string>({ maxAttempts: 3, backoff: { initialMs: 10, jitter: 0 } }),
        }),
      );
      expectObservable(out, '^--!').toBe('---');
    });
    expect(attempts).toBe(1);
  });

  it('emits nothing from the dead letter and keeps a handler that never fails untouched', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const executor = new KeyedExecutor({ lanes: 1 });
      const out = cold('ab|', { a: msg('x', '1'), b: msg('y', '2') }).pipe(
        keyedDispatch({
          executor,
          key: (m: Msg) => m.key,
          handle: (m: Msg) => (m.key === 'x' ? throwError(() => new VersionConflict()) : [m.id]),
          failurePolicy: retryPolicy<Msg, string>({ maxAttempts: 1, deadLetter: () => of('ignored') }),
        }),
      );
      expectObservable(out).toBe('-b|', { b: '2' });
    });
  });

  it('counts only the first callback of a thenable that calls back twice: its value, with no retry and no dead letter', () => {
    const dead: Msg[] = [];
    const callsBackTwice = (m: Msg): PromiseLike<string> =>
      ({
        // biome-ignore lint/suspicious/noThenProperty: a thenable on purpose.
        then(resolve: (v: string) => void, reject: (e: unknown) => void) {
          resolve(m.id);
          reject(new VersionConflict());
        },
      }) as never;
    testScheduler().run(({ cold, expectObservable }) => {
      const failurePolicy = retryPolicy<Msg, string>({
        maxAttempts: 1,
        deadLetter: (m) => void dead.push(m),
      });
      const options = { executor: new KeyedExecutor({ lanes: 1 }), key: (m: Msg) => m.key, failurePolicy };
      const out = cold('a|', { a: msg('x', '1') }).pipe(
        keyedDispatch({ ...options, handle: callsBackTwice }),
      );
      expectObservable(out).toBe('1|', { 1: '1' });
    });
    expect(dead).toEqual([]);
  });

  it('rejects invalid options with a TypeError naming the option, the value and its type', () => {
    expect(() => retryPolicy({ maxAttempts: 0 })).toThrow(
      'retryPolicy: expected `maxAttempts` to be an integer >= 1, got 0 (number)',
    );
    expect(() => retryPolicy({ backoff: { jitter: 2 } })).toThrow(
      'retryPolicy: expected `backoff.jitter` to be a number between 0 and 1, got 2 (number)',
    );
    expect(() => retryPolicy({ backoff: { initialMs: 50, maxMs: 10 } })).toThrow(
      'retryPolicy: expected `backoff.maxMs` to be a number between 50 and 2147483647, got 10 (number)',
    );
    expect(() => retryPolicy({ backoff: { factor: 0.5 } })).toThrow('`backoff.factor` to be a number >= 1');
    expect(() => retryPolicy({ retryable: 'yes' as never })).toThrow(
      "retryPolicy: expected `retryable` to be a function, got 'yes' (string)",
    );
    expect(() =>
      keyedDispatch({ key: (m: Msg) => m.key, handle: () => EMPTY, failurePolicy: { retry: 3 } as never }),
    ).toThrow(
      "keyedDispatch: expected `failurePolicy` to be a failure policy (from retryPolicy()) or 'error', got an object (object)",
    );
    expect(() => retryPolicy({ onFailure: 1 as never })).toThrow(
      'retryPolicy: expected `onFailure` to be a function, got 1 (number)',
    );
  });
});
