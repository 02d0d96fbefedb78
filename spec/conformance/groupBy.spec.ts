/**
 * RxJS 7.8's `groupBy` operator spec, ported where it applies to `keyedDispatch`:
 * `groupBy(keyFn)` + `mergeMap((group) => group.pipe(concatMap(project)))` is
 * `keyedDispatch({ key: keyFn, handle: project })`. The ported cases check what that composition
 * promises: the values of a group in order, one handler at a time, groups side by side, errors and
 * completion of the source, the key selector's errors, and unsubscription. Where the original expects
 * a group Observable, the port expects the handler's values; the handlers take three frames
 * (`work`), so that a group's next value visibly waits for the previous one. Expected marbles are
 * those of the groupBy + mergeMap + concatMap composition.
 *
 * Not applicable (they test the GroupedObservable API, which keyedDispatch does not expose: there are
 * no group Observables to subscribe to, unsubscribe from, or close):
 * - 'should group values with an element selector': no element selector (map in the handler instead).
 * - 'should group values with a duration selector': no duration selector; a key's mailbox closes by itself once drained.
 * - 'should group values with a subject selector': no connector; there is no group Subject.
 * - 'should emit GroupObservables': the output carries the handlers' values, not group Observables.
 * - 'should group values with a keySelector, assert GroupSubject key': no group object with a `key` (the handler's context has it).
 * - 'should group values with a keySelector and elementSelector, but elementSelector throws': no element selector.
 * - 'should allow the outer to be unsubscribed early but inners continue': groups do not outlive the output; unsubscribing it cancels every handler.
 * - 'should allow an inner to be unsubscribed early but other inners continue': there is no per-group subscription to end.
 * - 'should allow inners to be unsubscribed early at different times': there is no per-group subscription to end.
 * - 'should allow subscribing late to an inner Observable, outer completes': no group Observable to subscribe to late.
 * - 'should allow subscribing late to an inner Observable, outer throws': no group Observable to subscribe to late.
 * - 'should allow subscribing late to inner, unsubscribe outer early': no group Observable to subscribe to late.
 * - 'should allow using a keySelector, elementSelector, and durationSelector': no element or duration selector.
 * - 'should allow using a keySelector, elementSelector, and durationSelector that throws': no element or duration selector.
 * - 'should allow using a keySelector and a durationSelector, outer throws': no duration selector.
 * - 'should allow using a durationSelector, and outer unsubscribed early': no duration selector.
 * - 'should allow using a durationSelector, outer and all inners unsubscribed early': no duration selector.
 * - 'should dispose a durationSelector after closing the group': no duration selector.
 * - 'should allow using a durationSelector, but keySelector throws': no duration selector (a throwing key selector is ported below).
 * - 'should allow using a durationSelector, but elementSelector throws': no duration or element selector.
 * - 'should allow using a durationSelector which eventually throws': no duration selector.
 * - 'should allow an inner to be unsubscribed early but other inners continue, with durationSelector': no duration selector, no per-group subscription.
 * - 'should allow inners to be unsubscribed early at different times, with durationSelector': no duration selector, no per-group subscription.
 * - 'should return inners that when subscribed late exhibit hot behavior': no group Observable to subscribe to late.
 * - 'should return inner group that when subscribed late emits complete()': no group Observable to subscribe to late.
 * - 'should return inner group that when subscribed late emits error()': skipped in RxJS itself; no group Observable either.
 * - 'should not error for late subscribed inners if outer is unsubscribed before inners are subscribed': no group Observable to subscribe to late.
 * - 'should not break lift() composability': keyedDispatch builds a new Observable instead of calling `source.lift` (lift is deprecated as public API in RxJS 7), so a custom Observable subclass is not carried through.
 */
import { keyedDispatch } from 'keyed-dispatch';
import { map, mergeMap, Observable, of, take } from 'rxjs';
import type { ColdObservable } from 'rxjs/internal/testing/ColdObservable';
import { executorPerTest, testScheduler } from './support';

const values = {
  a: '  foo',
  b: ' FoO ',
  c: 'baR  ',
  d: 'foO ',
  e: ' Baz   ',
  f: '  qux ',
  g: '   bar',
  h: ' BAR  ',
  i: 'FOO ',
  j: 'baz  ',
  k: ' bAZ ',
  l: '    fOo    ',
};

const normalized = (val: string) => val.toLowerCase().trim();

describe('keyedDispatch as groupBy + mergeMap + concatMap', () => {
  const executor = executorPerTest();

  /** The operator under test: `project` runs for each value, one at a time per key of `keyFn`. */
  function dispatch<T, K, R>(keyFn: (value: T) => K, project: (value: T) => Observable<R>) {
    return keyedDispatch({ executor: executor(), key: keyFn, handle: project });
  }

  /** A handler taking three frames, then emitting its message: `work` records every run. */
  function handlerOf(work: ColdObservable<string>) {
    return (value: string) => work.pipe(map(() => value));
  }

  it('should group numbers by odd/even', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const e1 = hot('  --1---2---3---4---5---|           ');
      const work = cold('----------(x|)                   ');
      const worksubs = [
        '               --^---------!                     ',
        '               ------^---------!                 ',
        '               ------------^---------!           ',
        '               ----------------^---------!       ',
        '               ----------------------^---------! ',
      ];
      const expected = '------------1---2-----3---4-----(5|)';

      const source = e1.pipe(dispatch((val: string) => Number.parseInt(val, 10) % 2, handlerOf(work)));

      expectObservable(source).toBe(expected);
      expectSubscriptions(work.subscriptions).toBe(worksubs);
    });
  });

  it('should group values', () => {
    const results: Array<{ key: number; value: number }> = [];
    let completed = false;

    of(1, 2, 3)
      .pipe(
        dispatch(
          (x: number) => x % 2,
          (x: number) => of({ key: x % 2, value: x }),
        ),
      )
      .subscribe({
        next: (result) => results.push(result),
        complete: () => {
          completed = true;
        },
      });

    // Each group's values, in order; the order across groups is not what this case checks.
    expect(results.filter((r) => r.key === 1).map((r) => r.value)).toEqual([1, 3]);
    expect(results.filter((r) => r.key === 0).map((r) => r.value)).toEqual([2]);
    expect(completed).toBe(true);
  });

  it('should handle an empty Observable', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const e1 = cold(' |   ');
      const e1subs = '  (^!)';
      const expected = '|   ';

      const source = e1.pipe(dispatch(normalized, (val: string) => of(val)));

      expectObservable(source).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should handle a never Observable', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const e1 = cold(' -');
      const e1subs = '  ^';
      const expected = '-';

      const source = e1.pipe(dispatch(normalized, (val: string) => of(val)));

      expectObservable(source).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should handle a just-throw Observable', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const e1 = cold('  #  ');
      const e1subs = '  (^!)';
      const expected = '#   ';

      const source = e1.pipe(dispatch(normalized, (val: string) => of(val)));

      expectObservable(source).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should handle an Observable with a single value', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const e1 = hot('  ^--a--|', { a: '  foo' });
      const e1subs = '  ^-----!';
      const expected = '---a--|';

      const source = e1.pipe(dispatch(normalized, (val: string) => of(val)));

      expectObservable(source).toBe(expected, { a: '  foo' });
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should group values with a keySelector', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const e1 = hot('-1--2--^-a-b-c-d-e-f-g-h-i-j-k-l-|    ', values);
      const e1subs = '       ^-------------------------!    ';
      const work = cold('       ---(x|)                       ');
      const worksubs = [
        '                    --^--!                         ', // a foo
        '                    -----^--!                      ', // b foo, after a
        '                    ------^--!                     ', // c bar
        '                    --------^--!                   ', // d foo, after b
        '                    ----------^--!                 ', // e baz
        '                    ------------^--!               ', // f qux
        '                    --------------^--!             ', // g bar
        '                    -----------------^--!          ', // h bar, after g
        '                    ------------------^--!         ', // i foo
        '                    --------------------^--!       ', // j baz
        '                    -----------------------^--!    ', // k baz, after j
        '                    ------------------------^--!   ', // l foo
      ];
      const expected = '     -----a--bc-d-e-f-g--hi-j--k(l|)';

      const source = e1.pipe(dispatch(normalized, handlerOf(work)));

      expectObservable(source).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
      expectSubscriptions(work.subscriptions).toBe(worksubs);
    });
  });

  it('should group values with a keySelector, but outer throws', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const e1 = hot('-1--2--^-a-b-c-d-e-f-g-h-i-j-k-l-#', values);
      const e1subs = '       ^-------------------------!';
      const work = cold('       ---(x|)                    ');
      const expected = '     -----a--bc-d-e-f-g--hi-j--#';

      const source = e1.pipe(dispatch(normalized, handlerOf(work)));

      expectObservable(source).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should group values with a keySelector, inners propagate error from outer', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const e1 = hot('-1--2--^-a-b-c-d-e-f-g-h-i-j-k-l-#', values);
      const e1subs = '       ^-------------------------!';
      // Handlers that never complete: each group runs its first value only, until the error.
      const work = cold('       -x-                        ');
      const worksubs = [
        '                    --^-----------------------!', // foo
        '                    ------^-------------------!', // bar
        '                    ----------^---------------!', // baz
        '                    ------------^-------------!', // qux
      ];
      const expected = '     ---a---c---e-f------------#';

      const source = e1.pipe(dispatch(normalized, handlerOf(work)));

      expectObservable(source).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
      expectSubscriptions(work.subscriptions).toBe(worksubs);
    });
  });

  it('should allow outer to be unsubscribed early', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const e1 = hot('-1--2--^-a-b-c-d-e-f-g-h-i-j-k-l-|', values);
      const unsub = '        -----------!               ';
      const e1subs = '       ^----------!               ';
      const work = cold('       ---(x|)                    ');
      const worksubs = [
        '                    --^--!                     ',
        '                    -----^--!                  ',
        '                    ------^--!                 ',
        '                    --------^--!               ',
        '                    ----------^!               ',
      ];
      const expected = '     -----a--bc-                ';

      const source = e1.pipe(dispatch(normalized, handlerOf(work)));

      expectObservable(source, unsub).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
      expectSubscriptions(work.subscriptions).toBe(worksubs);
    });
  });

  it('should unsubscribe from the source when the outer and inner subscriptions are disposed', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const e1 = hot('-1--2--^-a-b-c-d-e-f-g-h-i-j-k-l-|', values);
      const e1subs = '       ^-!                        ';
      const expected = '     --(a|)                     ';

      const source = e1.pipe(
        dispatch(normalized, (val: string) => of(val)),
        take(1),
      );

      expectObservable(source).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should not break unsubscription chain when unsubscribed explicitly', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const e1 = hot('-1--2--^-a-b-c-d-e-f-g-h-i-j-k-l-|', values);
      const e1subs = '       ^----------!               ';
      const work = cold('       ---(x|)                    ');
      const worksubs = [
        '                    --^--!                     ',
        '                    -----^--!                  ',
        '                    ------^--!                 ',
        '                    --------^--!               ',
        '                    ----------^!               ',
      ];
      const expected = '     -----a--bc-                ';
      const unsub = '        -----------!               ';

      const source = e1.pipe(
        mergeMap((x: string) => of(x)),
        dispatch(normalized, handlerOf(work)),
        mergeMap((x: string) => of(x)),
      );

      expectObservable(source, unsub).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
      expectSubscriptions(work.subscriptions).toBe(worksubs);
    });
  });

  it('should group values with a keySelector which eventually throws', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const e1 = hot('-1--2--^-a-b-c-d-e-f-g-h-i-j-k-l-|', values);
      const e1subs = '       ^-------------------!';
      const work = cold('       ---(x|)              ');
      const worksubs = [
        '                    --^--!               ',
        '                    -----^--!            ',
        '                    ------^--!           ',
        '                    --------^--!         ',
        '                    ----------^--!       ',
        '                    ------------^--!     ',
        '                    --------------^--!   ',
        '                    -----------------^--!', // h: cut by the error in its last frame
        '                    ------------------^-!', // i
      ];
      const expected = '     -----a--bc-d-e-f-g--#';

      let invoked = 0;
      const source = e1.pipe(
        dispatch((val: string) => {
          invoked++;
          if (invoked === 10) {
            throw 'error';
          }
          return normalized(val);
        }, handlerOf(work)),
      );

      expectObservable(source).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
      expectSubscriptions(work.subscriptions).toBe(worksubs);
    });
  });

  it('should stop listening to a synchronous observable when unsubscribed', () => {
    const sideEffects: number[] = [];
    const synchronousObservable = new Observable<number>((subscriber) => {
      // Checks whether the subscriber was closed on each loop: when the unsubscribe hits (from the
      // `take`), it should be closed.
      for (let i = 0; !subscriber.closed && i < 10; i++) {
        sideEffects.push(i);
        subscriber.next(i);
      }
    });

    synchronousObservable
      .pipe(
        dispatch(
          (value: number) => value,
          (value: number) => of(value),
        ),
        take(3),
      )
      .subscribe(() => {
        /* noop */
      });

    expect(sideEffects).toEqual([0, 1, 2]);
  });
});
