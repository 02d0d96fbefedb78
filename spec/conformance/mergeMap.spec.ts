/**
 * RxJS 7.8's `mergeMap` operator spec, ported to `keyedDispatch` with a distinct key per message:
 * `keyedDispatch({ key: distinctKeys(), handle: project })` in place of `mergeMap(project)`, and
 * `maxInFlight: N` added in place of `mergeMap(project, N)` (a plain source's excess is buffered, as
 * concurrency-limited mergeMap buffers it: `onOverflow: 'buffer'`, the default).
 * The handler gets `(message, context)`, not `(value, index)`: where a case uses the index, the source
 * carries it in the message (`map((v, i) => ({ v, i }))` before the operator).
 *
 * Ported under another name (keyedDispatch has no resultSelector argument to pass as `void 0`):
 * - 'should support a void resultSelector (still deprecated)' is 'should merge the inners of a synchronous source'.
 * - 'should support a void resultSelector (still deprecated) and concurrency limit' is 'should merge the inners of a synchronous source, with maxInFlight 1'.
 *
 * Not applicable:
 * - 'should support the deprecated resultSelector': keyedDispatch has no resultSelector parameter (map in the handler instead).
 */
import { keyedDispatch } from 'keyed-dispatch';
import {
  asapScheduler,
  defer,
  delay,
  from,
  lastValueFrom,
  map,
  mergeMap,
  Observable,
  of,
  scheduled,
  take,
  timer,
  toArray,
} from 'rxjs';
import { sleep } from '../support/waits';
import { arrayRepeat, asInteropObservable, distinctKeys, executorPerTest, testScheduler } from './support';

describe('keyedDispatch with distinct keys, as mergeMap', () => {
  const executor = executorPerTest();

  it('should map-and-flatten each item to an Observable', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const values = { x: 10, y: 30, z: 50 };
      const x = cold('    x-x-x|             ', values);
      //                        y-y-y|
      //                           z-z-z|
      const xsubs = [
        '               --^----!             ',
        '               --------^----!       ',
        '               -----------^----!    ',
      ];
      const e1 = hot('  --1-----3--5--------|');
      const e1subs = '  ^-------------------!';
      const expected = '--x-x-x-y-yzyz-z----|';

      const result = e1.pipe(
        keyedDispatch({
          executor: executor(),
          key: distinctKeys(),
          handle: (value: string) => x.pipe(map((i) => i * +value)),
        }),
      );

      expectObservable(result).toBe(expected, values);
      expectSubscriptions(x.subscriptions).toBe(xsubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should merge the inners of a synchronous source', () => {
    const results: number[] = [];
    let completed = false;

    of(1, 2, 3)
      .pipe(
        keyedDispatch({
          executor: executor(),
          key: distinctKeys(),
          handle: (x: number) => of(x, x + 1, x + 2),
        }),
      )
      .subscribe({
        next: (value) => results.push(value),
        complete: () => {
          completed = true;
        },
      });

    expect(results).toEqual([1, 2, 3, 2, 3, 4, 3, 4, 5]);
    expect(completed).toBe(true);
  });

  it('should merge the inners of a synchronous source, with maxInFlight 1', () => {
    const results: number[] = [];
    let completed = false;

    of(1, 2, 3)
      .pipe(
        keyedDispatch({
          executor: executor(),
          key: distinctKeys(),
          handle: (x: number) => of(x, x + 1, x + 2),
          maxInFlight: 1,
        }),
      )
      .subscribe({
        next: (value) => results.push(value),
        complete: () => {
          completed = true;
        },
      });

    expect(results).toEqual([1, 2, 3, 2, 3, 4, 3, 4, 5]);
    expect(completed).toBe(true);
  });

  it('should mergeMap many regular interval inners', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const a = cold('  ----a---a---a---(a|)                    ');
      const asubs = '   ^---------------!                       ';
      const b = cold('      ----b---b---(b|)                    ');
      const bsubs = '   ----^-----------!                       ';
      const c = cold('                  ----c---c---c---c---(c|)');
      const csubs = '   ----------------^-------------------!   ';
      const d = cold('                          ----(d|)        ');
      const dsubs = '   ------------------------^---!           ';
      const e1 = hot('  a---b-----------c-------d-------|       ');
      const e1subs = '  ^-------------------------------!       ';
      const expected = '----a---(ab)(ab)(ab)c---c---(cd)c---(c|)';

      const observableLookup: Record<string, Observable<string>> = { a, b, c, d };
      const source = e1.pipe(
        keyedDispatch({
          executor: executor(),
          key: distinctKeys(),
          handle: (value: string) => observableLookup[value],
        }),
      );

      expectObservable(source).toBe(expected);
      expectSubscriptions(a.subscriptions).toBe(asubs);
      expectSubscriptions(b.subscriptions).toBe(bsubs);
      expectSubscriptions(c.subscriptions).toBe(csubs);
      expectSubscriptions(d.subscriptions).toBe(dsubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should map values to constant resolved promises and merge', async () => {
    const source = from([4, 3, 2, 1]);
    const project = () => from(Promise.resolve(42));

    const results = await lastValueFrom(
      source.pipe(keyedDispatch({ executor: executor(), key: distinctKeys(), handle: project }), toArray()),
    );

    expect(results).toEqual([42, 42, 42, 42]);
  });

  it('should map values to constant rejected promises and merge', async () => {
    const source = from([4, 3, 2, 1]);
    const project = () => from(Promise.reject<number>(42));

    const error = await new Promise((resolve, reject) =>
      source.pipe(keyedDispatch({ executor: executor(), key: distinctKeys(), handle: project })).subscribe({
        next: () => reject(new Error('Subscriber next handler not supposed to be called.')),
        error: resolve,
        complete: () => reject(new Error('Subscriber complete handler not supposed to be called.')),
      }),
    );

    expect(error).toBe(42);
  });

  it('should map values to resolved promises and merge', async () => {
    // The index travels in the message: keyedDispatch passes none.
    const source = from([4, 3, 2, 1]).pipe(map((v, i) => ({ v, i })));
    const project = ({ v, i }: { v: number; i: number }) => from(Promise.resolve(v + i));

    const results = await lastValueFrom(
      source.pipe(keyedDispatch({ executor: executor(), key: distinctKeys(), handle: project }), toArray()),
    );

    expect(results).toEqual([4, 4, 4, 4]);
  });

  it('should map values to rejected promises and merge', async () => {
    // The index travels in the message: keyedDispatch passes none.
    const source = from([4, 3, 2, 1]).pipe(map((v, i) => ({ v, i })));
    const project = ({ v, i }: { v: number; i: number }) => from(Promise.reject<string>(`${v}-${i}`));

    const error = await new Promise((resolve, reject) =>
      source.pipe(keyedDispatch({ executor: executor(), key: distinctKeys(), handle: project })).subscribe({
        next: () => reject(new Error('Subscriber next handler not supposed to be called.')),
        error: resolve,
        complete: () => reject(new Error('Subscriber complete handler not supposed to be called.')),
      }),
    );

    expect(error).toBe('4-0');
  });

  it('should mergeMap many outer values to many inner values', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const x = cold('   ----i---j---k---l---|                        ');
      //                         ----i---j---k---l---|
      //                                 ----i---j---k---l---|
      //                                         ----i---j---k---l---|
      const xsubs = [
        '               -^-------------------!                        ',
        '               ---------^-------------------!                ',
        '               -----------------^-------------------!        ',
        '               -------------------------^-------------------!',
      ];
      const e1 = hot('  -a-------b-------c-------d-------|            ');
      const e1subs = '  ^--------------------------------!            ';
      const expected = '-----i---j---(ki)(lj)(ki)(lj)(ki)(lj)k---l---|';

      const result = e1.pipe(keyedDispatch({ executor: executor(), key: distinctKeys(), handle: () => x }));

      expectObservable(result).toBe(expected);
      expectSubscriptions(x.subscriptions).toBe(xsubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should mergeMap many outer to many inner, complete late', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const x = cold('   ----i---j---k---l---|                            ');
      //                         ----i---j---k---l---|
      //                                 ----i---j---k---l---|
      //                                         ----i---j---k---l---|
      const xsubs = [
        '               -^-------------------!                            ',
        '               ---------^-------------------!                    ',
        '               -----------------^-------------------!            ',
        '               -------------------------^-------------------!    ',
      ];
      const e1 = hot('  -a-------b-------c-------d-----------------------|');
      const e1subs = '  ^------------------------------------------------!';
      const expected = '-----i---j---(ki)(lj)(ki)(lj)(ki)(lj)k---l-------|';

      const result = e1.pipe(keyedDispatch({ executor: executor(), key: distinctKeys(), handle: () => x }));

      expectObservable(result).toBe(expected);
      expectSubscriptions(x.subscriptions).toBe(xsubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should mergeMap many outer to many inner, outer never completes', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const x = cold('   ----i---j---k---l---|                                  ');
      //                         ----i---j---k---l---|
      //                                 ----i---j---k---l---|
      //                                         ----i---j---k---l---|
      //                                                 ----i---j---k---l---|
      //                                                                 ----i--
      const xsubs = [
        '               -^-------------------!                                  ',
        '               ---------^-------------------!                          ',
        '               -----------------^-------------------!                  ',
        '               -------------------------^-------------------!          ',
        '               ---------------------------------^-------------------!  ',
        '               -------------------------------------------------^-----!',
      ];
      const e1 = hot('  -a-------b-------c-------d-------e---------------f------');
      const e1subs = '  ^------------------------------------------------------!';
      const expected = '-----i---j---(ki)(lj)(ki)(lj)(ki)(lj)(ki)(lj)k---l---i--';
      const unsub = '   -------------------------------------------------------!';

      const source = e1.pipe(keyedDispatch({ executor: executor(), key: distinctKeys(), handle: () => x }));

      expectObservable(source, unsub).toBe(expected);
      expectSubscriptions(x.subscriptions).toBe(xsubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should not break unsubscription chains when result is unsubscribed explicitly', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const x = cold('   ----i---j---k---l---|                                  ');
      //                         ----i---j---k---l---|
      //                                 ----i---j---k---l---|
      //                                         ----i---j---k---l---|
      //                                                 ----i---j---k---l---|
      //                                                                 ----i--
      const xsubs = [
        '               -^-------------------!                                  ',
        '               ---------^-------------------!                          ',
        '               -----------------^-------------------!                  ',
        '               -------------------------^-------------------!          ',
        '               ---------------------------------^-------------------!  ',
        '               -------------------------------------------------^-----!',
      ];
      const e1 = hot('  -a-------b-------c-------d-------e---------------f------');
      const e1subs = '  ^------------------------------------------------------!';
      const expected = '-----i---j---(ki)(lj)(ki)(lj)(ki)(lj)(ki)(lj)k---l---i--';
      const unsub = '   -------------------------------------------------------!';

      const source = e1.pipe(
        map((x) => x),
        keyedDispatch({ executor: executor(), key: distinctKeys(), handle: () => x }),
        map((x) => x),
      );

      expectObservable(source, unsub).toBe(expected);
      expectSubscriptions(x.subscriptions).toBe(xsubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should not break unsubscription chains with interop inners when result is unsubscribed explicitly', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const x = cold('           --a--b--c--d--e--|           ');
      const xsubs = '   ---------^-----------!                ';
      const y = cold('                     ---f---g---h---i--|');
      const ysubs = '   -------------------^-!                ';
      const e1 = hot('  ---------x---------y---------|        ');
      const e1subs = '  ^--------------------!                ';
      const expected = '-----------a--b--c--d-                ';
      const unsub = '   ---------------------!                ';

      const observableLookup: Record<string, Observable<string>> = { x, y };

      // The inners look like Observables of another library (interop): unsubscription must still reach
      // the subscriber the operator gave them.
      const result = e1.pipe(
        mergeMap((x) => of(x)),
        keyedDispatch({
          executor: executor(),
          key: distinctKeys(),
          handle: (value: string) => asInteropObservable(observableLookup[value]),
        }),
        mergeMap((x) => of(x)),
      );

      expectObservable(result, unsub).toBe(expected);
      expectSubscriptions(x.subscriptions).toBe(xsubs);
      expectSubscriptions(y.subscriptions).toBe(ysubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should mergeMap many outer to many inner, inner never completes', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const x = cold('   ----i---j---k---l-------------------------');
      //                         ----i---j---k---l-----------------
      //                                 ----i---j---k---l---------
      //                                         ----i---j---k---l-
      const xsubs = [
        '               -^-----------------------------------------',
        '               ---------^---------------------------------',
        '               -----------------^-------------------------',
        '               -------------------------^-----------------',
      ];
      const e1 = hot('  -a-------b-------c-------d-------|         ');
      const e1subs = '  ^--------------------------------!         ';
      const expected = '-----i---j---(ki)(lj)(ki)(lj)(ki)(lj)k---l-';

      const result = e1.pipe(keyedDispatch({ executor: executor(), key: distinctKeys(), handle: () => x }));

      expectObservable(result).toBe(expected);
      expectSubscriptions(x.subscriptions).toBe(xsubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should mergeMap many outer to many inner, and inner throws', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const x = cold('   ----i---j---k---l-------#   ');
      //                         ----i---j---k---l
      //                                 ----i---j
      //                                         -
      const xsubs = [
        '               -^-----------------------!   ',
        '               ---------^---------------!   ',
        '               -----------------^-------!   ',
        '               -------------------------(^!)',
      ];
      const e1 = hot('  -a-------b-------c-------d   ');
      const e1subs = '  ^------------------------!   ';
      const expected = '-----i---j---(ki)(lj)(ki)#   ';

      const result = e1.pipe(keyedDispatch({ executor: executor(), key: distinctKeys(), handle: () => x }));

      expectObservable(result).toBe(expected);
      expectSubscriptions(x.subscriptions).toBe(xsubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should mergeMap many outer to many inner, and outer throws', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const x = cold('   ----i---j---k---l---|            ');
      //                         ----i---j---k---l---|
      //                                 ----i---j---k---l
      //                                         ----i---j
      const xsubs = [
        '               -^-------------------!            ',
        '               ---------^-------------------!    ',
        '               -----------------^---------------!',
        '               -------------------------^-------!',
      ];
      const e1 = hot('  -a-------b-------c-------d-------#');
      const e1subs = '  ^--------------------------------!';
      const expected = '-----i---j---(ki)(lj)(ki)(lj)(ki)#';

      const result = e1.pipe(keyedDispatch({ executor: executor(), key: distinctKeys(), handle: () => x }));

      expectObservable(result).toBe(expected);
      expectSubscriptions(x.subscriptions).toBe(xsubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should mergeMap many outer to many inner, both inner and outer throw', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const x = cold('   ----i---j---k---l---#            ');
      //                         ----i---j---k
      //                                 ----i
      const xsubs = [
        '               -^-------------------!            ',
        '               ---------^-----------!            ',
        '               -----------------^---!            ',
      ];
      const e1 = hot('  -a-------b-------c-------d-------#');
      const e1subs = '  ^--------------------!            ';
      const expected = '-----i---j---(ki)(lj)#            ';

      const result = e1.pipe(keyedDispatch({ executor: executor(), key: distinctKeys(), handle: () => x }));

      expectObservable(result).toBe(expected);
      expectSubscriptions(x.subscriptions).toBe(xsubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should mergeMap to many cold Observable, with parameter concurrency=1', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const x = cold('   ----i---j---k---l---|                                        ');
      //                                     ----i---j---k---l---|
      //                                                         ----i---j---k---l---|
      const xsubs = [
        '               -^-------------------!                                        ',
        '               ---------------------^-------------------!                    ',
        '               -----------------------------------------^-------------------!',
      ];
      const e1 = hot('  -a-------b-------c---|                                        ');
      const e1subs = '  ^--------------------!                                        ';
      const expected = '-----i---j---k---l-------i---j---k---l-------i---j---k---l---|';

      const project = () => x;
      const result = e1.pipe(
        keyedDispatch({ executor: executor(), key: distinctKeys(), handle: project, maxInFlight: 1 }),
      );

      expectObservable(result).toBe(expected);
      expectSubscriptions(x.subscriptions).toBe(xsubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should mergeMap to many cold Observable, with parameter concurrency=2', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const x = cold('   ----i---j---k---l---|                    ');
      //                         ----i---j---k---l---|
      //                                     ----i---j---k---l---|
      const xsubs = [
        '               -^-------------------!                    ',
        '               ---------^-------------------!            ',
        '               ---------------------^-------------------!',
      ];
      const e1 = hot('  -a-------b-------c---|                    ');
      const e1subs = '  ^--------------------!                    ';
      const expected = '-----i---j---(ki)(lj)k---(li)j---k---l---|';

      const project = () => x;
      const result = e1.pipe(
        keyedDispatch({ executor: executor(), key: distinctKeys(), handle: project, maxInFlight: 2 }),
      );

      expectObservable(result).toBe(expected);
      expectSubscriptions(x.subscriptions).toBe(xsubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should mergeMap to many hot Observable, with parameter concurrency=1', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const a = hot('   x----i---j---k---l---|                                        ');
      const asubs = '   -^-------------------!                                        ';
      const b = hot('   -x-x-xxxx-x-x-xxxxx-x----i---j---k---l---|                    ');
      const bsubs = '   ---------------------^-------------------!                    ';
      const c = hot('   x-xxxx---x-x-x-x-x-xx--x--x-x--x--xxxx-x-----i---j---k---l---|');
      const csubs = '   -----------------------------------------^-------------------!';
      const e1 = hot('  -a-------b-------c---|                                        ');
      const e1subs = '  ^--------------------!                                        ';
      const expected = '-----i---j---k---l-------i---j---k---l-------i---j---k---l---|';
      const inners: Record<string, Observable<string>> = { a, b, c };

      const project = (x: string) => inners[x];
      const result = e1.pipe(
        keyedDispatch({ executor: executor(), key: distinctKeys(), handle: project, maxInFlight: 1 }),
      );

      expectObservable(result).toBe(expected);
      expectSubscriptions(a.subscriptions).toBe(asubs);
      expectSubscriptions(b.subscriptions).toBe(bsubs);
      expectSubscriptions(c.subscriptions).toBe(csubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should mergeMap to many hot Observable, with parameter concurrency=2', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const x = hot('   x----i---j---k---l---|                    ');
      const xsubs = '   -^-------------------!                    ';
      const y = hot('   -x-x-xxxx----i---j---k---l---|            ');
      const ysubs = '   ---------^-------------------!            ';
      const z = hot('   x-xxxx---x-x-x-x-x-xx----i---j---k---l---|');
      const zsubs = '   ---------------------^-------------------!';
      const e1 = hot('  -a-------b-------c---|                    ');
      const e1subs = '  ^--------------------!                    ';
      const expected = '-----i---j---(ki)(lj)k---(li)j---k---l---|';
      const inners: Record<string, Observable<string>> = { a: x, b: y, c: z };

      const project = (x: string) => inners[x];
      const result = e1.pipe(
        keyedDispatch({ executor: executor(), key: distinctKeys(), handle: project, maxInFlight: 2 }),
      );

      expectObservable(result).toBe(expected);
      expectSubscriptions(x.subscriptions).toBe(xsubs);
      expectSubscriptions(y.subscriptions).toBe(ysubs);
      expectSubscriptions(z.subscriptions).toBe(zsubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should mergeMap many complex, where all inners are finite', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const a = cold(' -#                                                  ');
      const asubs: string[] = [];
      const b = cold('   -#                                                ');
      const bsubs: string[] = [];
      const c = cold('        -2--3--4--5------------------6-|             ');
      const csubs = '       --^------------------------------!             ';
      const d = cold('              -----------2--3|                       ');
      const dsubs = '       --------^--------------!                       ';
      const e = cold('                     -1--------2--3-----4--5--------|');
      const esubs = '       ---------------^------------------------------!';
      const f = cold('                                      --|            ');
      const fsubs = '       --------------------------------^-!            ';
      const g = cold('                                            ---1-2|  ');
      const gsubs = '       --------------------------------------^-----!  ';
      const e1 = hot('-a-b--^-c-----d------e----------------f-----g|       ');
      const e1subs = '      ^--------------------------------------!       ';
      const expected = '    ---2--3--4--5---1--2--3--2--3--6--4--5---1-2--|';

      const observableLookup: Record<string, Observable<string>> = { a, b, c, d, e, f, g };

      const result = e1.pipe(
        keyedDispatch({
          executor: executor(),
          key: distinctKeys(),
          handle: (value: string) => observableLookup[value],
        }),
      );

      expectObservable(result).toBe(expected);
      expectSubscriptions(a.subscriptions).toBe(asubs);
      expectSubscriptions(b.subscriptions).toBe(bsubs);
      expectSubscriptions(c.subscriptions).toBe(csubs);
      expectSubscriptions(d.subscriptions).toBe(dsubs);
      expectSubscriptions(e.subscriptions).toBe(esubs);
      expectSubscriptions(f.subscriptions).toBe(fsubs);
      expectSubscriptions(g.subscriptions).toBe(gsubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should mergeMap many complex, all inners finite except one', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const a = cold(' -#                                                  ');
      const asubs: string[] = [];
      const b = cold('   -#                                                ');
      const bsubs: string[] = [];
      const c = cold('        -2--3--4--5------------------6-|             ');
      const csubs = '       --^------------------------------!             ';
      const d = cold('              -----------2--3-                       ');
      const dsubs = '       --------^---------------                       ';
      const e = cold('                     -1--------2--3-----4--5--------|');
      const esubs = '       ---------------^------------------------------!';
      const f = cold('                                      --|            ');
      const fsubs = '       --------------------------------^-!            ';
      const g = cold('                                            ---1-2|  ');
      const gsubs = '       --------------------------------------^-----!  ';
      const e1 = hot('-a-b--^-c-----d------e----------------f-----g|       ');
      const e1subs = '      ^--------------------------------------!       ';
      const expected = '    ---2--3--4--5---1--2--3--2--3--6--4--5---1-2---';

      const observableLookup: Record<string, Observable<string>> = { a, b, c, d, e, f, g };

      const result = e1.pipe(
        keyedDispatch({
          executor: executor(),
          key: distinctKeys(),
          handle: (value: string) => observableLookup[value],
        }),
      );

      expectObservable(result).toBe(expected);
      expectSubscriptions(a.subscriptions).toBe(asubs);
      expectSubscriptions(b.subscriptions).toBe(bsubs);
      expectSubscriptions(c.subscriptions).toBe(csubs);
      expectSubscriptions(d.subscriptions).toBe(dsubs);
      expectSubscriptions(e.subscriptions).toBe(esubs);
      expectSubscriptions(f.subscriptions).toBe(fsubs);
      expectSubscriptions(g.subscriptions).toBe(gsubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should mergeMap many complex, inners finite, outer does not complete', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const a = cold(' -#                                                  ');
      const asubs: string[] = [];
      const b = cold('   -#                                                ');
      const bsubs: string[] = [];
      const c = cold('        -2--3--4--5------------------6-|             ');
      const csubs = '       --^------------------------------!             ';
      const d = cold('              -----------2--3|                       ');
      const dsubs = '       --------^--------------!                       ';
      const e = cold('                     -1--------2--3-----4--5--------|');
      const esubs = '       ---------------^------------------------------!';
      const f = cold('                                      --|            ');
      const fsubs = '       --------------------------------^-!            ';
      const g = cold('                                            ---1-2|  ');
      const gsubs = '       --------------------------------------^-----!  ';
      const e1 = hot('-a-b--^-c-----d------e----------------f-----g--------');
      const e1subs = '      ^----------------------------------------------';
      const expected = '    ---2--3--4--5---1--2--3--2--3--6--4--5---1-2---';

      const observableLookup: Record<string, Observable<string>> = { a, b, c, d, e, f, g };

      const result = e1.pipe(
        keyedDispatch({
          executor: executor(),
          key: distinctKeys(),
          handle: (value: string) => observableLookup[value],
        }),
      );

      expectObservable(result).toBe(expected);
      expectSubscriptions(a.subscriptions).toBe(asubs);
      expectSubscriptions(b.subscriptions).toBe(bsubs);
      expectSubscriptions(c.subscriptions).toBe(csubs);
      expectSubscriptions(d.subscriptions).toBe(dsubs);
      expectSubscriptions(e.subscriptions).toBe(esubs);
      expectSubscriptions(f.subscriptions).toBe(fsubs);
      expectSubscriptions(g.subscriptions).toBe(gsubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should mergeMap many complex, all inners finite, and outer throws', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const a = cold(' -#                                                  ');
      const asubs: string[] = [];
      const b = cold('   -#                                                ');
      const bsubs: string[] = [];
      const c = cold('        -2--3--4--5------------------6-|             ');
      const csubs = '       --^------------------------------!             ';
      const d = cold('              -----------2--3|                       ');
      const dsubs = '       --------^--------------!                       ';
      const e = cold('                     -1--------2--3-----4--5--------|');
      const esubs = '       ---------------^-----------------------!       ';
      const f = cold('                                      --|            ');
      const fsubs = '       --------------------------------^-!            ';
      const g = cold('                                            ---1-2|  ');
      const gsubs = '       --------------------------------------^!       ';
      const e1 = hot('-a-b--^-c-----d------e----------------f-----g#       ');
      const e1subs = '      ^--------------------------------------!       ';
      const expected = '    ---2--3--4--5---1--2--3--2--3--6--4--5-#       ';

      const observableLookup: Record<string, Observable<string>> = { a, b, c, d, e, f, g };

      const result = e1.pipe(
        keyedDispatch({
          executor: executor(),
          key: distinctKeys(),
          handle: (value: string) => observableLookup[value],
        }),
      );

      expectObservable(result).toBe(expected);
      expectSubscriptions(a.subscriptions).toBe(asubs);
      expectSubscriptions(b.subscriptions).toBe(bsubs);
      expectSubscriptions(c.subscriptions).toBe(csubs);
      expectSubscriptions(d.subscriptions).toBe(dsubs);
      expectSubscriptions(e.subscriptions).toBe(esubs);
      expectSubscriptions(f.subscriptions).toBe(fsubs);
      expectSubscriptions(g.subscriptions).toBe(gsubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should mergeMap many complex, all inners complete except one throws', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const a = cold(' -#                                                  ');
      const asubs: string[] = [];
      const b = cold('   -#                                                ');
      const bsubs: string[] = [];
      const c = cold('        -2--3--4--5------------------6-#             ');
      const csubs = '       --^------------------------------!             ';
      const d = cold('              -----------2--3|                       ');
      const dsubs = '       --------^--------------!                       ';
      const e = cold('                     -1--------2--3-----4--5--------|');
      const esubs = '       ---------------^-----------------!             ';
      const f = cold('                                      --|            ');
      const fsubs = '       --------------------------------^!             ';
      const g = cold('                                            ---1-2|  ');
      const gsubs: string[] = [];
      const e1 = hot('-a-b--^-c-----d------e----------------f-----g|       ');
      const e1subs = '      ^--------------------------------!             ';
      const expected = '    ---2--3--4--5---1--2--3--2--3--6-#             ';

      const observableLookup: Record<string, Observable<string>> = { a, b, c, d, e, f, g };

      const result = e1.pipe(
        keyedDispatch({
          executor: executor(),
          key: distinctKeys(),
          handle: (value: string) => observableLookup[value],
        }),
      );

      expectObservable(result).toBe(expected);
      expectSubscriptions(a.subscriptions).toBe(asubs);
      expectSubscriptions(b.subscriptions).toBe(bsubs);
      expectSubscriptions(c.subscriptions).toBe(csubs);
      expectSubscriptions(d.subscriptions).toBe(dsubs);
      expectSubscriptions(e.subscriptions).toBe(esubs);
      expectSubscriptions(f.subscriptions).toBe(fsubs);
      expectSubscriptions(g.subscriptions).toBe(gsubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should mergeMap many complex, all inners finite, outer is unsubscribed', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const a = cold(' -#                                                  ');
      const asubs: string[] = [];
      const b = cold('   -#                                                ');
      const bsubs: string[] = [];
      const c = cold('        -2--3--4--5------------------6-|             ');
      const csubs = '       --^---------------------------!                ';
      const d = cold('              -----------2--3|                       ');
      const dsubs = '       --------^--------------!                       ';
      const e = cold('                     -1--------2--3-----4--5--------|');
      const esubs = '       ---------------^--------------!                ';
      const f = cold('                                      --|            ');
      const fsubs: string[] = [];
      const g = cold('                                            ---1-2|  ');
      const gsubs: string[] = [];
      const e1 = hot('-a-b--^-c-----d------e----------------f-----g|');
      const e1subs = '      ^-----------------------------!                ';
      const expected = '    ---2--3--4--5---1--2--3--2--3--                ';
      const unsub = '       ------------------------------!                ';

      const observableLookup: Record<string, Observable<string>> = { a, b, c, d, e, f, g };

      const source = e1.pipe(
        keyedDispatch({
          executor: executor(),
          key: distinctKeys(),
          handle: (value: string) => observableLookup[value],
        }),
      );

      expectObservable(source, unsub).toBe(expected);
      expectSubscriptions(a.subscriptions).toBe(asubs);
      expectSubscriptions(b.subscriptions).toBe(bsubs);
      expectSubscriptions(c.subscriptions).toBe(csubs);
      expectSubscriptions(d.subscriptions).toBe(dsubs);
      expectSubscriptions(e.subscriptions).toBe(esubs);
      expectSubscriptions(f.subscriptions).toBe(fsubs);
      expectSubscriptions(g.subscriptions).toBe(gsubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should mergeMap many complex, all inners finite, project throws', () => {
    testScheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const a = cold(' -#                                                  ');
      const asubs: string[] = [];
      const b = cold('   -#                                                ');
      const bsubs: string[] = [];
      const c = cold('        -2--3--4--5------------------6-|             ');
      const csubs = '       --^------------!                               ';
      const d = cold('              -----------2--3|                       ');
      const dsubs = '       --------^------!                               ';
      const e = cold('                     -1--------2--3-----4--5--------|');
      const esubs: string[] = [];
      const f = cold('                                      --|            ');
      const fsubs: string[] = [];
      const g = cold('                                            ---1-2|  ');
      const gsubs: string[] = [];
      const e1 = hot('-a-b--^-c-----d------e----------------f-----g|       ');
      const e1subs = '      ^--------------!                               ';
      const expected = '    ---2--3--4--5--#                               ';

      const observableLookup: Record<string, Observable<string>> = { a, b, c, d, e, f, g };
      const source = e1.pipe(
        keyedDispatch({
          executor: executor(),
          key: distinctKeys(),
          handle: (value: string) => {
            if (value === 'e') {
              throw 'error';
            }
            return observableLookup[value];
          },
        }),
      );

      expectObservable(source).toBe(expected);
      expectSubscriptions(a.subscriptions).toBe(asubs);
      expectSubscriptions(b.subscriptions).toBe(bsubs);
      expectSubscriptions(c.subscriptions).toBe(csubs);
      expectSubscriptions(d.subscriptions).toBe(dsubs);
      expectSubscriptions(e.subscriptions).toBe(esubs);
      expectSubscriptions(f.subscriptions).toBe(fsubs);
      expectSubscriptions(g.subscriptions).toBe(gsubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should mergeMap many outer to an array for each value', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const e1 = hot('  2-----4--------3--------2-------|');
      const e1subs = '  ^-------------------------------!';
      const expected = '(22)--(4444)---(333)----(22)----|';

      const source = e1.pipe(
        keyedDispatch({
          executor: executor(),
          key: distinctKeys(),
          handle: (value: string) => arrayRepeat(value, +value),
        }),
      );

      expectObservable(source).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should mergeMap many outer to inner arrays, and outer throws', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const e1 = hot('  2-----4--------3--------2-------#');
      const e1subs = '  ^-------------------------------!';
      const expected = '(22)--(4444)---(333)----(22)----#';

      const source = e1.pipe(
        keyedDispatch({
          executor: executor(),
          key: distinctKeys(),
          handle: (value: string) => arrayRepeat(value, +value),
        }),
      );

      expectObservable(source).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should mergeMap many outer to inner arrays, outer gets unsubscribed', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const e1 = hot('  2-----4--------3--------2-------|');
      const e1subs = '  ^------------!                   ';
      const expected = '(22)--(4444)--                   ';
      const unsub = '   -------------!                   ';

      const source = e1.pipe(
        keyedDispatch({
          executor: executor(),
          key: distinctKeys(),
          handle: (value: string) => arrayRepeat(value, +value),
        }),
      );

      expectObservable(source, unsub).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should mergeMap many outer to inner arrays, project throws', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const e1 = hot('  2-----4--------3--------2-------|');
      const e1subs = '  ^--------------!                 ';
      const expected = '(22)--(4444)---#                 ';

      const source = e1.pipe(
        keyedDispatch({
          executor: executor(),
          key: distinctKeys(),
          handle: (value: string) => {
            if (value === '3') {
              throw 'error';
            }
            return arrayRepeat(value, +value);
          },
        }),
      );

      expectObservable(source).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should map and flatten', () => {
    const source = of(1, 2, 3, 4).pipe(
      keyedDispatch({ executor: executor(), key: distinctKeys(), handle: (x: number) => of(`${x}!`) }),
    );

    const expected = ['1!', '2!', '3!', '4!'];
    let completed = false;

    source.subscribe({
      next: (x) => {
        expect(x).toBe(expected.shift());
      },
      complete: () => {
        expect(expected.length).toBe(0);
        completed = true;
      },
    });

    expect(completed).toBe(true);
  });

  it('should map and flatten an Array', () => {
    const source = of(1, 2, 3, 4).pipe(
      keyedDispatch({ executor: executor(), key: distinctKeys(), handle: (x: number) => [`${x}!`] }),
    );

    const expected = ['1!', '2!', '3!', '4!'];
    let completed = false;

    source.subscribe({
      next: (x) => {
        expect(x).toBe(expected.shift());
      },
      complete: () => {
        expect(expected.length).toBe(0);
        completed = true;
      },
    });

    expect(completed).toBe(true);
  });

  it('should support nested merges', async () => {
    // RxJS issue 4071: both levels of flattening are keyedDispatch here.
    const results: (number | string)[] = [];

    of(1)
      .pipe(
        keyedDispatch({
          executor: executor(),
          key: distinctKeys(),
          handle: () =>
            defer(() => scheduled([2], asapScheduler)).pipe(
              keyedDispatch({
                executor: executor(),
                key: distinctKeys(),
                handle: () => defer(() => scheduled([3], asapScheduler)),
              }),
            ),
        }),
      )
      .subscribe({
        next: (value) => results.push(value),
        complete: () => results.push('done'),
      });

    await sleep(0);
    expect(results).toEqual([3, 'done']);
  });

  it('should support nested merges with promises', async () => {
    // RxJS issue 4071: both levels of flattening are keyedDispatch here.
    const results: (number | string)[] = [];

    of(1)
      .pipe(
        keyedDispatch({
          executor: executor(),
          key: distinctKeys(),
          handle: () =>
            from(Promise.resolve(2)).pipe(
              keyedDispatch({ executor: executor(), key: distinctKeys(), handle: () => Promise.resolve(3) }),
            ),
        }),
      )
      .subscribe({
        next: (value) => results.push(value),
        complete: () => results.push('done'),
      });

    await sleep(0);
    expect(results).toEqual([3, 'done']);
  });

  it('should support wrapped sources', async () => {
    // RxJS issue 4095.
    const results: (number | string)[] = [];

    const wrapped = new Observable<number>((subscriber) => {
      const subscription = timer(0, asapScheduler).subscribe(subscriber);
      return () => subscription.unsubscribe();
    });
    wrapped
      .pipe(
        keyedDispatch({ executor: executor(), key: distinctKeys(), handle: () => timer(0, asapScheduler) }),
      )
      .subscribe({
        next: (value) => results.push(value),
        complete: () => results.push('done'),
      });

    await sleep(0);
    expect(results).toEqual([0, 'done']);
  });

  it('should properly handle errors from iterables that are processed after some async', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const noXError = new Error('we do not allow x');
      const e1 = cold(' -----a------------b-----|', { a: ['o', 'o', 'o'], b: ['o', 'x', 'o'] });
      const e1subs = '  ^-----------------!      ';
      const expected = '-----(ooo)--------(o#)   ';

      const iterable = function* (data: string[]) {
        for (const d of data) {
          if (d === 'x') {
            throw noXError;
          }
          yield d;
        }
      };
      // The inner flattening is keyedDispatch too.
      const result = e1.pipe(
        keyedDispatch({
          executor: executor(),
          key: distinctKeys(),
          handle: (x: string[]) =>
            of(x).pipe(
              delay(0),
              keyedDispatch({ executor: executor(), key: distinctKeys(), handle: iterable }),
            ),
        }),
      );

      expectObservable(result).toBe(expected, undefined, noXError);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
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
        keyedDispatch({ executor: executor(), key: distinctKeys(), handle: (value: number) => of(value) }),
        take(3),
      )
      .subscribe(() => {
        /* noop */
      });

    expect(sideEffects).toEqual([0, 1, 2]);
  });
});
