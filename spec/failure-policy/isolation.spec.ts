import { fromIterable, type HandlerContext, KeyedExecutor, keyedDispatch, retryPolicy } from 'keyed-dispatch';
import {
  catchError,
  defer,
  EMPTY,
  from,
  groupBy,
  mergeMap,
  type Observable,
  retry,
  throwError,
  timer,
} from 'rxjs';
import { concatMap, map } from 'rxjs/operators';
import { TestScheduler } from 'rxjs/testing';

class VersionConflict extends Error {
  override name = 'VersionConflict';
}

interface Msg {
  key: string;
  seq: number;
}

const KEYS = 1000;
const PER_KEY = 5;
/** Every handler takes 1 ms of virtual time, so throughput shows in virtual time. */
const HANDLER_MS = 1;

/** 1,000 keys × 5 messages, interleaved round by round; the failing key's 3 messages come first. */
function traffic(withFailingKey: boolean): Msg[] {
  const messages: Msg[] = [];
  if (withFailingKey) for (let seq = 1; seq <= 3; seq++) messages.push({ key: 'bad', seq });
  for (let seq = 1; seq <= PER_KEY; seq++)
    for (let k = 0; k < KEYS; k++) messages.push({ key: `k${k}`, seq });
  return messages;
}

interface Run {
  /** Virtual time at which each message of the other keys finished, in finishing order. */
  othersDoneAt: number[];
  /** The failing key's handler starts: `seq@time`. */
  badStarts: string[];
  /** Other keys' messages finished by the time the failing key's first retry starts. */
  othersDoneBeforeFirstRetry: number;
}

function runKeyedDispatch(withFailingKey: boolean): Run {
  const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
  const run: Run = { othersDoneAt: [], badStarts: [], othersDoneBeforeFirstRetry: -1 };
  scheduler.run(() => {
    // One lane: the failing key's backoff shares it with all 1,000 other keys.
    const executor = new KeyedExecutor({ lanes: 1 });
    const handle = (m: Msg, context: HandlerContext<string>): Observable<Msg> => {
      if (m.key === 'bad') {
        if (m.seq === 1 && run.badStarts.length === 1)
          run.othersDoneBeforeFirstRetry = run.othersDoneAt.length;
        run.badStarts.push(`${m.seq}@${scheduler.now()}`);
        if (m.seq === 1)
          return timer(HANDLER_MS, context.scheduler).pipe(
            mergeMap(() => throwError(() => new VersionConflict())),
          );
      }
      return timer(HANDLER_MS, context.scheduler).pipe(map(() => m));
    };
    fromIterable(traffic(withFailingKey))
      .pipe(
        keyedDispatch({
          executor,
          key: (m: Msg) => m.key,
          handle,
          // Wide enough that the window never binds: what is measured is the lane, not the window.
          maxInFlight: 10_000,
          failurePolicy: retryPolicy<Msg, string>({
            maxAttempts: 3,
            backoff: { initialMs: 100, factor: 2, jitter: 0 },
          }),
        }),
      )
      .subscribe((m) => {
        if (m.key !== 'bad') run.othersDoneAt.push(scheduler.now());
      });
  });
  return run;
}

describe('a failing key with a 100 ms backoff among 1,000 flowing keys', () => {
  it('leaves the other keys exactly the throughput they have without it, in virtual time', () => {
    const without = runKeyedDispatch(false);
    const withFailure = runKeyedDispatch(true);
    expect(without.othersDoneAt).toHaveLength(KEYS * PER_KEY);
    expect(withFailure.othersDoneAt).toEqual(without.othersDoneAt);
    // 1,000 messages a millisecond, the last ones at 5 ms, with or without the failing key.
    expect(withFailure.othersDoneAt.filter((t) => t === 1)).toHaveLength(KEYS);
    expect(withFailure.othersDoneAt[withFailure.othersDoneAt.length - 1]).toBe(PER_KEY * HANDLER_MS);
  });

  it('runs every other message while the failing key waits out its first backoff', () => {
    const run = runKeyedDispatch(true);
    expect(run.othersDoneBeforeFirstRetry).toBe(KEYS * PER_KEY);
  });

  it("runs the failing key's later messages after its retries, in order", () => {
    const run = runKeyedDispatch(true);
    // Attempt 1 fails at 1, retry at 101 fails at 102, retry at 302 fails at 303: dead-lettered; then 2 and 3.
    expect(run.badStarts).toEqual(['1@0', '1@101', '1@302', '2@303', '3@304']);
  });

  it('is not what the groupBy(hash % 128) + concatMap pattern gives: there the backoff stalls its group', () => {
    // The same traffic through groupBy(hash % 128) + concatMap, with the retry inside concatMap: every key hashed to the
    // failing key's group waits for the whole backoff. Shown so the measurement above can tell the difference.
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    const othersDoneAt: number[] = [];
    scheduler.run(() => {
      const hash = (key: string) => [...key].reduce((h, c) => (h * 31 + c.charCodeAt(0)) | 0, 7) >>> 0;
      const handle = (m: Msg): Observable<Msg> => {
        if (m.key === 'bad' && m.seq === 1) {
          return timer(HANDLER_MS).pipe(mergeMap(() => throwError(() => new VersionConflict())));
        }
        return timer(HANDLER_MS).pipe(map(() => m));
      };
      from(traffic(true))
        .pipe(
          groupBy((m) => hash(m.key) % 128),
          mergeMap((group) =>
            group.pipe(
              concatMap((m) =>
                defer(() => handle(m)).pipe(
                  retry({ count: 2, delay: (_err, n) => timer(100 * 2 ** (n - 1)) }),
                  // Spent: dead-lettered, the stream goes on.
                  catchError(() => EMPTY),
                ),
              ),
            ),
          ),
        )
        .subscribe((m) => {
          if (m.key !== 'bad') othersDoneAt.push(scheduler.now());
        });
    });
    expect(othersDoneAt).toHaveLength(KEYS * PER_KEY);
    const stalled = othersDoneAt.filter((t) => t > PER_KEY * HANDLER_MS);
    // The failing key's group-mates finish only after its 303 ms of attempts and backoff.
    expect(stalled.length).toBeGreaterThan(0);
    expect(Math.max(...othersDoneAt)).toBeGreaterThan(300);
  });
});
