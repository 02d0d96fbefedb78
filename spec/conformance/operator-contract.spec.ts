/**
 * Behaviour that `concatMap` and `mergeMap` promise and users of an RxJS operator rely on, stated for
 * `keyedDispatch` on its own (the ported RxJS specs check the same in their original form):
 * finalization of a key's handler before its next one starts, stopping a synchronous source when the
 * output is unsubscribed, and stopping a running synchronous handler when the output is unsubscribed.
 */
import { keyedDispatch } from 'keyed-dispatch';
import { defer, delay, finalize, lastValueFrom, map, Observable, of, take, timer, toArray } from 'rxjs';
import { distinctKeys, executorPerTest, oneKey, testScheduler } from './support';

/** The most values a synchronous source or handler of these specs produces before it gives up. */
const BOUND = 200_000;

/**
 * A synchronous source of 0, 1, 2, … that stops as soon as its subscriber is closed, or after `BOUND`
 * values; `produced()` says how many it emitted.
 */
function countingSource(): { source: Observable<number>; produced: () => number } {
  let produced = 0;
  const source = new Observable<number>((subscriber) => {
    for (let i = 0; !subscriber.closed && i < BOUND; i++) {
      produced++;
      subscriber.next(i);
    }
    if (!subscriber.closed) subscriber.complete();
  });
  return { source, produced: () => produced };
}

describe('keyedDispatch and the RxJS operator contract', () => {
  const executor = executorPerTest();

  describe('finalization', () => {
    it("should finalize a key's handler before the key's next handler starts", () => {
      const scheduler = testScheduler();
      const log: string[] = [];
      const handle = (n: number) =>
        defer(() => {
          log.push(`init${n}`);
          return of(`next${n}`).pipe(
            delay(10, scheduler),
            finalize(() => log.push(`fin${n}`)),
          );
        });

      of(1, 2, 3)
        .pipe(keyedDispatch({ executor: executor(), key: oneKey, handle }))
        .subscribe((value) => log.push(value));
      scheduler.flush();

      expect(log).toEqual(['init1', 'next1', 'fin1', 'init2', 'next2', 'fin2', 'init3', 'next3', 'fin3']);
    });

    it("should finalize a synchronous handler before the key's next handler starts", () => {
      const log: string[] = [];
      const handle = (n: number) =>
        defer(() => {
          log.push(`init${n}`);
          return of(`next${n}`).pipe(finalize(() => log.push(`fin${n}`)));
        });

      of(1, 2, 3)
        .pipe(keyedDispatch({ executor: executor(), key: oneKey, handle }))
        .subscribe((value) => log.push(value));

      expect(log).toEqual(['init1', 'next1', 'fin1', 'init2', 'next2', 'fin2', 'init3', 'next3', 'fin3']);
    });

    it('should let a handler take a per-key resource that the previous handler of the key released in finalize', async () => {
      const held = new Set<string>();
      const conflicts: string[] = [];
      const messages = ['a1', 'b1', 'a2', 'b2', 'a3', 'b3'];
      const handle = (m: string) =>
        defer(() => {
          const resource = m[0];
          if (held.has(resource)) conflicts.push(`${m} started while ${resource} was held`);
          held.add(resource);
          return timer(1).pipe(
            map(() => m),
            finalize(() => held.delete(resource)),
          );
        });

      const out = await lastValueFrom(
        of(...messages).pipe(
          keyedDispatch({ executor: executor(), key: (m: string) => m[0], handle }),
          toArray(),
        ),
      );

      expect(conflicts).toEqual([]);
      expect(out.filter((m) => m.startsWith('a'))).toEqual(['a1', 'a2', 'a3']);
      expect(out.filter((m) => m.startsWith('b'))).toEqual(['b1', 'b2', 'b3']);
    });
  });

  describe('a synchronous plain source', () => {
    it('should stop reading a synchronous source once take(3) has its values, with one key', () => {
      const { source, produced } = countingSource();
      const values: number[] = [];

      source
        .pipe(keyedDispatch({ executor: executor(), key: oneKey, handle: (n: number) => of(n) }), take(3))
        .subscribe((value) => values.push(value));

      expect(values).toEqual([0, 1, 2]);
      expect(produced()).toBe(3);
    });

    it('should stop reading a synchronous source once take(3) has its values, with distinct keys', () => {
      const { source, produced } = countingSource();
      const values: number[] = [];

      source
        .pipe(
          keyedDispatch({ executor: executor(), key: distinctKeys(), handle: (n: number) => of(n) }),
          take(3),
        )
        .subscribe((value) => values.push(value));

      expect(values).toHaveLength(3);
      expect(produced()).toBe(3);
    });

    it('should return from an endless synchronous source once take(3) has its values', () => {
      // The source never completes by itself; a guard (a million values or two seconds) ends its loop
      // if the operator never closes its subscriber, so that the spec fails instead of hanging.
      let produced = 0;
      let guardHit = false;
      const deadline = Date.now() + 2_000;
      const endless = new Observable<number>((subscriber) => {
        for (let i = 0; !subscriber.closed; i++) {
          if (produced >= 1_000_000 || Date.now() > deadline) {
            guardHit = true;
            return;
          }
          produced++;
          subscriber.next(i);
        }
      });
      const values: number[] = [];

      endless
        .pipe(keyedDispatch({ executor: executor(), key: oneKey, handle: (n: number) => of(n) }), take(3))
        .subscribe((value) => values.push(value));

      expect(values).toEqual([0, 1, 2]);
      expect(guardHit).toBe(false);
      expect(produced).toBe(3);
    });
  });

  describe('unsubscription', () => {
    it('should stop a running synchronous handler Observable when the output is unsubscribed', () => {
      const { source: handlerValues, produced } = countingSource();
      const values: number[] = [];

      of('m')
        .pipe(keyedDispatch({ executor: executor(), key: oneKey, handle: () => handlerValues }), take(3))
        .subscribe((value) => values.push(value));

      expect(values).toEqual([0, 1, 2]);
      expect(produced()).toBe(3);
    });

    it('should stop a running synchronous handler Observable when the output is unsubscribed, with distinct keys', () => {
      const { source: handlerValues, produced } = countingSource();
      const values: number[] = [];

      of('m')
        .pipe(
          keyedDispatch({ executor: executor(), key: distinctKeys(), handle: () => handlerValues }),
          take(3),
        )
        .subscribe((value) => values.push(value));

      expect(values).toEqual([0, 1, 2]);
      expect(produced()).toBe(3);
    });
  });
});
