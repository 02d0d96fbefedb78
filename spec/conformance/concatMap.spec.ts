/**
 * RxJS 7.8's `concatMap` operator spec, ported to `keyedDispatch` with one key:
 * `keyedDispatch({ key: () => 'k', handle: project })` in place of `concatMap(project)`.
 * The handler gets `(message, context)`, not `(value, index)`: where a case uses the index, the source
 * carries it in the message (`map((v, i) => ({ v, i }))` before the operator).
 *
 * Ported under another name (keyedDispatch has no resultSelector argument to pass as `void 0`):
 * - 'should support a void resultSelector (still deprecated)' is 'should concatenate the inners of a synchronous source, in order'.
 *
 * Not applicable:
 * - 'should support the deprecated resultSelector': keyedDispatch has no resultSelector parameter (map in the handler instead).
 */
import { keyedDispatch } from 'keyed-dispatch';
import {
  defer,
  delay,
  finalize,
  from,
  lastValueFrom,
  map,
  mergeMap,
  Observable,
  of,
  take,
  toArray,
} from 'rxjs';
import { arrayRepeat, executorPerTest, oneKey, testScheduler } from './support';

describe('keyedDispatch with one key, as concatMap', () => {
  const executor = executorPerTest();

  it('should map-and-flatten each item to an Observable', () => {
    testScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const e1 = hot('   --1-----3--5-------|');
      const e1subs = '   ^------------------!';
      const e2 = cold('  x-x-x|              ', { x: 10 });
      const expected = ' --x-x-x-y-y-yz-z-z-|';
      const values = { x: 10, y: 30, z: 50 };

      const result = e1.pipe(
        keyedDispatch({
          executor: executor(),
          key: oneKey,
          handle: (x: string) => e2.pipe(map((i) => i * Number.parseInt(x, 10))),
        }),
      );

      expectObservable(result).toBe(expected, values);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should concatenate the inners of a synchronous source, in order', () => {
    const results: number[] = [];
    let completed = false;

    of(1, 2, 3)
      .pipe(keyedDispatch({ executor: executor(), key: oneKey, handle: (x: number) => of(x, x + 1, x + 2) }))
      .subscribe({
        next: (value) => results.push(value),
        complete: () => {
          completed = true;
        },
      });

    expect(results).toEqual([1, 2, 3, 2, 3, 4, 3, 4, 5]);
    expect(completed).toBe(true);
  });

  it('should concatenate many regular interval inners', () => {
    testScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const a = cold('  --a-a-a-(a|)                            ');
      const asubs = '   ^-------!                               ';
      const b = cold('          ----b--b--(b|)                  ');
      const bsubs = '   --------^---------!                     ';
      const c = cold('                           -c-c-(c|)      ');
      const csubs = '   -------------------------^----!         ';
      const d = cold('                                ------(d|)');
      const dsubs = '   ------------------------------^-----!   ';
      const e1 = hot('  a---b--------------------c-d----|       ');
      const e1subs = '  ^-------------------------------!       ';
      const expected = '--a-a-a-a---b--b--b-------c-c-c-----(d|)';

      const observableLookup: Record<string, Observable<string>> = { a, b, c, d };
      const source = e1.pipe(
        keyedDispatch({
          executor: executor(),
          key: oneKey,
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

  it('should concatMap many outer values to many inner values', () => {
    testScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const values = { i: 'foo', j: 'bar', k: 'baz', l: 'qux' };
      const e1 = hot('    -a---b---c---d---|                        ');
      const e1subs = '    ^----------------!                        ';
      const inner = cold(' --i-j-k-l-|                              ', values);
      const innersubs = [
        '                 -^---------!                              ',
        '                 -----------^---------!                    ',
        '                 ---------------------^---------!          ',
        '                 -------------------------------^---------!',
      ];
      const expected = '  ---i-j-k-l---i-j-k-l---i-j-k-l---i-j-k-l-|';

      const result = e1.pipe(keyedDispatch({ executor: executor(), key: oneKey, handle: () => inner }));

      expectObservable(result).toBe(expected, values);
      expectSubscriptions(inner.subscriptions).toBe(innersubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should handle an empty source', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const e1 = cold('   |');
      const e1subs = '    (^!)';
      const inner = cold('-1-2-3|');
      const innersubs: string[] = [];
      const expected = '  |';

      const result = e1.pipe(keyedDispatch({ executor: executor(), key: oneKey, handle: () => inner }));

      expectObservable(result).toBe(expected);
      expectSubscriptions(inner.subscriptions).toBe(innersubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should handle a never source', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const e1 = cold('   -');
      const e1subs = '    ^';
      const inner = cold('-1-2-3|');
      const innersubs: string[] = [];
      const expected = '  -';

      const result = e1.pipe(keyedDispatch({ executor: executor(), key: oneKey, handle: () => inner }));

      expectObservable(result).toBe(expected);
      expectSubscriptions(inner.subscriptions).toBe(innersubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should error immediately if given a just-throw source', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const e1 = cold('   #');
      const e1subs = '    (^!)';
      const inner = cold('-1-2-3|');
      const innersubs: string[] = [];
      const expected = '  #';

      const result = e1.pipe(keyedDispatch({ executor: executor(), key: oneKey, handle: () => inner }));

      expectObservable(result).toBe(expected);
      expectSubscriptions(inner.subscriptions).toBe(innersubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should return a silenced version of the source if the mapped inner is empty', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const e1 = cold('   --a-b--c-| ');
      const e1subs = '    ^--------! ';
      const inner = cold('  |');
      const innersubs = [
        '                 --(^!)     ',
        '                 ----(^!)   ',
        '                 -------(^!)',
      ];
      const expected = '  ---------| ';

      const result = e1.pipe(keyedDispatch({ executor: executor(), key: oneKey, handle: () => inner }));

      expectObservable(result).toBe(expected);
      expectSubscriptions(inner.subscriptions).toBe(innersubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should return a never if the mapped inner is never', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const e1 = cold('  --a-b--c-|');
      const e1subs = '   ^--------!';
      const inner = cold(' -');
      const innersubs = '--^-------';
      const expected = ' ----------';

      const result = e1.pipe(keyedDispatch({ executor: executor(), key: oneKey, handle: () => inner }));

      expectObservable(result).toBe(expected);
      expectSubscriptions(inner.subscriptions).toBe(innersubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should propagate errors if the mapped inner is a just-throw Observable', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const e1 = cold('  --a-b--c-|');
      const e1subs = '   ^-!       ';
      const inner = cold(' #');
      const innersubs = '--(^!)    ';
      const expected = ' --#       ';

      const result = e1.pipe(keyedDispatch({ executor: executor(), key: oneKey, handle: () => inner }));

      expectObservable(result).toBe(expected);
      expectSubscriptions(inner.subscriptions).toBe(innersubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should concatMap many outer to many inner, complete late', () => {
    testScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const values = { i: 'foo', j: 'bar', k: 'baz', l: 'qux' };
      const e1 = hot('    -a---b---c---d----------------------------------|');
      const e1subs = '    ^-----------------------------------------------!';
      const inner = cold(' --i-j-k-l-|                                     ', values);
      const innersubs = [
        '                 -^---------!                                     ',
        '                 -----------^---------!                           ',
        '                 ---------------------^---------!                 ',
        '                 -------------------------------^---------!       ',
      ];
      const expected = '  ---i-j-k-l---i-j-k-l---i-j-k-l---i-j-k-l--------|';

      const result = e1.pipe(keyedDispatch({ executor: executor(), key: oneKey, handle: () => inner }));

      expectObservable(result).toBe(expected, values);
      expectSubscriptions(inner.subscriptions).toBe(innersubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should concatMap many outer to many inner, outer never completes', () => {
    testScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const values = { i: 'foo', j: 'bar', k: 'baz', l: 'qux' };
      const e1 = hot('    -a---b---c---d-----------------------------------');
      const e1subs = '    ^------------------------------------------------';
      const inner = cold(' --i-j-k-l-|                                     ', values);
      const innersubs = [
        '                 -^---------!                                     ',
        '                 -----------^---------!                           ',
        '                 ---------------------^---------!                 ',
        '                 -------------------------------^---------!       ',
      ];
      const expected = '  ---i-j-k-l---i-j-k-l---i-j-k-l---i-j-k-l---------';

      const result = e1.pipe(keyedDispatch({ executor: executor(), key: oneKey, handle: () => inner }));

      expectObservable(result).toBe(expected, values);
      expectSubscriptions(inner.subscriptions).toBe(innersubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should concatMap many outer to many inner, inner never completes', () => {
    testScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const values = { i: 'foo', j: 'bar', k: 'baz', l: 'qux' };
      const e1 = hot('    -a---b---c---d---|');
      const e1subs = '    ^----------------!';
      const inner = cold(' --i-j-k-l-       ', values);
      const innersubs = ' -^----------------';
      const expected = '  ---i-j-k-l--------';

      const result = e1.pipe(keyedDispatch({ executor: executor(), key: oneKey, handle: () => inner }));

      expectObservable(result).toBe(expected, values);
      expectSubscriptions(inner.subscriptions).toBe(innersubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should concatMap many outer to many inner, and inner throws', () => {
    testScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const values = { i: 'foo', j: 'bar', k: 'baz', l: 'qux' };
      const e1 = hot('    -a---b---c---d---|');
      const e1subs = '    ^----------!      ';
      const inner = cold(' --i-j-k-l-#      ', values);
      const innersubs = ' -^---------!      ';
      const expected = '  ---i-j-k-l-#      ';

      const result = e1.pipe(keyedDispatch({ executor: executor(), key: oneKey, handle: () => inner }));

      expectObservable(result).toBe(expected, values);
      expectSubscriptions(inner.subscriptions).toBe(innersubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should concatMap many outer to many inner, and outer throws', () => {
    testScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const values = { i: 'foo', j: 'bar', k: 'baz', l: 'qux' };
      const e1 = hot('    -a---b---c---d---#');
      const e1subs = '    ^----------------!';
      const inner = cold(' --i-j-k-l-|      ', values);
      const innersubs = ['                 -^---------!      ', '                 -----------^-----!'];
      const expected = '  ---i-j-k-l---i-j-#';

      const result = e1.pipe(keyedDispatch({ executor: executor(), key: oneKey, handle: () => inner }));

      expectObservable(result).toBe(expected, values);
      expectSubscriptions(inner.subscriptions).toBe(innersubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should concatMap many outer to many inner, both inner and outer throw', () => {
    testScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const values = { i: 'foo', j: 'bar', k: 'baz', l: 'qux' };
      const e1 = hot('    -a---b---c---d---#');
      const e1subs = '    ^----------!      ';
      const inner = cold(' --i-j-k-l-#      ', values);
      const innersubs = ' -^---------!      ';
      const expected = '  ---i-j-k-l-#      ';

      const result = e1.pipe(keyedDispatch({ executor: executor(), key: oneKey, handle: () => inner }));

      expectObservable(result).toBe(expected, values);
      expectSubscriptions(inner.subscriptions).toBe(innersubs);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should concatMap many complex, where all inners are finite', () => {
    testScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const a = cold('   -#                                                          ');
      const asubs: string[] = [];
      const b = cold('     -#                                                        ');
      const bsubs: string[] = [];
      const c = cold('          -2--3--4--5----6-|                                   ');
      const csubs = '         --^----------------!                                   ';
      const d = cold('                           ----2--3|                           ');
      const dsubs = '         -------------------^-------!                           ';
      const e = cold('                                   -1------2--3-4-5---|        ');
      const esubs = '         ---------------------------^------------------!        ';
      const f = cold('                                                      --|      ');
      const fsubs = '         ----------------------------------------------^-!      ';
      const g = cold('                                                        ---1-2|');
      const gsubs = '         ------------------------------------------------^-----!';
      const e1 = hot('  -a-b--^-c-----d------e----------------f-----g|               ');
      const e1subs = '        ^--------------------------------------!               ';
      const expected = '      ---2--3--4--5----6-----2--3-1------2--3-4-5--------1-2|';
      const observableLookup: Record<string, Observable<string>> = { a, b, c, d, e, f, g };

      const result = e1.pipe(
        keyedDispatch({
          executor: executor(),
          key: oneKey,
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

  it('should concatMap many complex, all inners finite except one', () => {
    testScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const a = cold('   -#                                                          ');
      const asubs: string[] = [];
      const b = cold('     -#                                                        ');
      const bsubs: string[] = [];
      const c = cold('          -2--3--4--5----6-|                                   ');
      const csubs = '         --^----------------!                                   ';
      const d = cold('                           ----2--3-                           ');
      const dsubs = '         -------------------^-----------------------------------';
      const e = cold('                                   -1------2--3-4-5---|        ');
      const esubs: string[] = [];
      const f = cold('                                                      --|      ');
      const fsubs: string[] = [];
      const g = cold('                                                        ---1-2|');
      const gsubs: string[] = [];
      const e1 = hot('  -a-b--^-c-----d------e----------------f-----g|               ');
      const e1subs = '        ^--------------------------------------!               ';
      const expected = '      ---2--3--4--5----6-----2--3----------------------------';
      const observableLookup: Record<string, Observable<string>> = { a, b, c, d, e, f, g };

      const result = e1.pipe(
        keyedDispatch({
          executor: executor(),
          key: oneKey,
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

  it('should concatMap many complex, inners finite, outer does not complete', () => {
    testScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const a = cold('   -#                                                          ');
      const asubs: string[] = [];
      const b = cold('     -#                                                        ');
      const bsubs: string[] = [];
      const c = cold('          -2--3--4--5----6-|                                   ');
      const csubs = '         --^----------------!                                   ';
      const d = cold('                           ----2--3|                           ');
      const dsubs = '         -------------------^-------!                           ';
      const e = cold('                                   -1------2--3-4-5---|        ');
      const esubs = '         ---------------------------^------------------!        ';
      const f = cold('                                                      --|      ');
      const fsubs = '         ----------------------------------------------^-!      ';
      const g = cold('                                                        ---1-2|');
      const gsubs = '         ------------------------------------------------^-----!';
      const e1 = hot('  -a-b--^-c-----d------e----------------f-----g---             ');
      const e1subs = '        ^                                                      ';
      const expected = '      ---2--3--4--5----6-----2--3-1------2--3-4-5--------1-2-';
      const observableLookup: Record<string, Observable<string>> = { a, b, c, d, e, f, g };

      const result = e1.pipe(
        keyedDispatch({
          executor: executor(),
          key: oneKey,
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

  it('should concatMap many complex, all inners finite, and outer throws', () => {
    testScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const a = cold('   -#                                                          ');
      const asubs: string[] = [];
      const b = cold('     -#                                                        ');
      const bsubs: string[] = [];
      const c = cold('          -2--3--4--5----6-|                                   ');
      const csubs = '         --^----------------!                                   ';
      const d = cold('                           ----2--3|                           ');
      const dsubs = '         -------------------^-------!                           ';
      const e = cold('                                   -1------2--3-4-5---|        ');
      const esubs = '         ---------------------------^-----------!               ';
      const f = cold('                                                      --|      ');
      const fsubs: string[] = [];
      const g = cold('                                                        ---1-2|');
      const gsubs: string[] = [];
      const e1 = hot('  -a-b--^-c-----d------e----------------f-----g#               ');
      const e1subs = '        ^--------------------------------------!               ';
      const expected = '      ---2--3--4--5----6-----2--3-1------2--3#               ';
      const observableLookup: Record<string, Observable<string>> = { a, b, c, d, e, f, g };

      const result = e1.pipe(
        keyedDispatch({
          executor: executor(),
          key: oneKey,
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

  it('should concatMap many complex, all inners complete except one throws', () => {
    testScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const a = cold('   -#                                                          ');
      const asubs: string[] = [];
      const b = cold('     -#                                                        ');
      const bsubs: string[] = [];
      const c = cold('          -2--3--4--5----6-#                                   ');
      const csubs = '         --^----------------!                                   ';
      const d = cold('                           ----2--3|                           ');
      const dsubs: string[] = [];
      const e = cold('                                   -1------2--3-4-5---|        ');
      const esubs: string[] = [];
      const f = cold('                                                      --|      ');
      const fsubs: string[] = [];
      const g = cold('                                                        ---1-2|');
      const gsubs: string[] = [];
      const e1 = hot('  -a-b--^-c-----d------e----------------f-----g|               ');
      const e1subs = '        ^------------------!                                   ';
      const expected = '      ---2--3--4--5----6-#                                   ';
      const observableLookup: Record<string, Observable<string>> = { a, b, c, d, e, f, g };

      const result = e1.pipe(
        keyedDispatch({
          executor: executor(),
          key: oneKey,
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

  it('should concatMap many complex, all inners finite, outer is unsubscribed early', () => {
    testScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const a = cold('   -#                                                          ');
      const asubs: string[] = [];
      const b = cold('     -#                                                        ');
      const bsubs: string[] = [];
      const c = cold('          -2--3--4--5----6-|                                   ');
      const csubs = '         --^----------------!                                   ';
      const d = cold('                           ----2--3|                           ');
      const dsubs = '         -------------------^-------!                           ';
      const e = cold('                                   -1------2--3-4-5---|        ');
      const esubs = '         ---------------------------^--!                        ';
      const f = cold('                                                      --|      ');
      const fsubs: string[] = [];
      const g = cold('                                                        ---1-2|');
      const gsubs: string[] = [];
      const e1 = hot('  -a-b--^-c-----d------e----------------f-----g|               ');
      const e1subs = '        ^-----------------------------!                        ';
      const unsub = '         ^-----------------------------!                        ';
      const expected = '      ---2--3--4--5----6-----2--3-1--                        ';
      const observableLookup: Record<string, Observable<string>> = { a, b, c, d, e, f, g };

      const result = e1.pipe(
        keyedDispatch({
          executor: executor(),
          key: oneKey,
          handle: (value: string) => observableLookup[value],
        }),
      );

      expectObservable(result, unsub).toBe(expected);
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

  it('should not break unsubscription chains when result is unsubscribed explicitly', () => {
    testScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const a = cold('   -#                                                          ');
      const asubs: string[] = [];
      const b = cold('   -#                                                          ');
      const bsubs: string[] = [];
      const c = cold('          -2--3--4--5----6-|                                   ');
      const csubs = '         --^----------------!                                   ';
      const d = cold('                           ----2--3|                           ');
      const dsubs = '         -------------------^-------!                           ';
      const e = cold('                                   -1------2--3-4-5---|        ');
      const esubs = '         ---------------------------^--!                        ';
      const f = cold('                                                      --|      ');
      const fsubs: string[] = [];
      const g = cold('                                                        ---1-2|');
      const gsubs: string[] = [];
      const e1 = hot('  -a-b--^-c-----d------e----------------f-----g|               ');
      const e1subs = '        ^-----------------------------!                        ';
      const unsub = '         ^-----------------------------!                        ';
      const expected = '      ---2--3--4--5----6-----2--3-1--                        ';
      const observableLookup: Record<string, Observable<string>> = { a, b, c, d, e, f, g };

      const result = e1.pipe(
        mergeMap((x) => of(x)),
        keyedDispatch({
          executor: executor(),
          key: oneKey,
          handle: (value: string) => observableLookup[value],
        }),
        mergeMap((x) => of(x)),
      );

      expectObservable(result, unsub).toBe(expected);
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

  it('should concatMap many complex, all inners finite, project throws', () => {
    testScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const a = cold('   -#                                                          ');
      const asubs: string[] = [];
      const b = cold('     -#                                                        ');
      const bsubs: string[] = [];
      const c = cold('          -2--3--4--5----6-|                                   ');
      const csubs = '         --^----------------!                                   ';
      const d = cold('                           ----2--3|                           ');
      const dsubs = '         -------------------^-------!                           ';
      const e = cold('                                   -1------2--3-4-5---|        ');
      const esubs: string[] = [];
      const f = cold('                                                      --|      ');
      const fsubs: string[] = [];
      const g = cold('                                                        ---1-2|');
      const gsubs: string[] = [];
      const e1 = hot('  -a-b--^-c-----d------e----------------f-----g|               ');
      const e1subs = '        ^--------------------------!                           ';
      const expected = '      ---2--3--4--5----6-----2--3#                           ';
      const observableLookup: Record<string, Observable<string>> = { a, b, c, d, e, f, g };

      const result = e1.pipe(
        keyedDispatch({
          executor: executor(),
          key: oneKey,
          handle: (value: string) => {
            if (value === 'e') {
              throw 'error';
            }
            return observableLookup[value];
          },
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

  it('should finalize before moving to the next observable', () => {
    const scheduler = testScheduler();
    const results: string[] = [];

    const create = (n: number) =>
      defer(() => {
        results.push(`init ${n}`);
        return of(`next ${n}`).pipe(
          delay(100, scheduler),
          finalize(() => {
            results.push(`finalized ${n}`);
          }),
        );
      });

    of(1, 2, 3)
      .pipe(keyedDispatch({ executor: executor(), key: oneKey, handle: (n: number) => create(n) }))
      .subscribe({
        next: (value) => results.push(value),
      });

    scheduler.flush();

    expect(results).toEqual([
      'init 1',
      'next 1',
      'finalized 1',
      'init 2',
      'next 2',
      'finalized 2',
      'init 3',
      'next 3',
      'finalized 3',
    ]);
  });

  it('should concatMap many outer to an array for each value', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const e1 = hot('  2-----4--------3--------2-------|');
      const e1subs = '  ^-------------------------------!';
      const expected = '(22)--(4444)---(333)----(22)----|';

      const result = e1.pipe(
        keyedDispatch({
          executor: executor(),
          key: oneKey,
          handle: (value: string) => arrayRepeat(value, +value),
        }),
      );

      expectObservable(result).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should concatMap many outer to inner arrays, outer unsubscribed early', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const e1 = hot('  2-----4--------3--------2-------|');
      const e1subs = '  ^------------!                   ';
      const unsub = '   ^------------!                   ';
      const expected = '(22)--(4444)--                   ';

      const result = e1.pipe(
        keyedDispatch({
          executor: executor(),
          key: oneKey,
          handle: (value: string) => arrayRepeat(value, +value),
        }),
      );

      expectObservable(result, unsub).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should concatMap many outer to inner arrays, project throws', () => {
    testScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const e1 = hot('  2-----4--------3--------2-------|');
      const e1subs = '  ^--------------!                 ';
      const expected = '(22)--(4444)---#                 ';

      let invoked = 0;
      const result = e1.pipe(
        keyedDispatch({
          executor: executor(),
          key: oneKey,
          handle: (value: string) => {
            invoked++;
            if (invoked === 3) {
              throw 'error';
            }
            return arrayRepeat(value, +value);
          },
        }),
      );

      expectObservable(result).toBe(expected);
      expectSubscriptions(e1.subscriptions).toBe(e1subs);
    });
  });

  it('should map values to constant resolved promises and concatenate', async () => {
    const source = from([4, 3, 2, 1]);
    const project = () => from(Promise.resolve(42));

    const results = await lastValueFrom(
      source.pipe(keyedDispatch({ executor: executor(), key: oneKey, handle: project }), toArray()),
    );

    expect(results).toEqual([42, 42, 42, 42]);
  });

  it('should map values to constant rejected promises and concatenate', async () => {
    const source = from([4, 3, 2, 1]);
    const project = () => from(Promise.reject(42));

    const error = await new Promise((resolve, reject) =>
      source.pipe(keyedDispatch({ executor: executor(), key: oneKey, handle: project })).subscribe({
        next: () => reject(new Error('Subscriber next handler not supposed to be called.')),
        error: resolve,
        complete: () => reject(new Error('Subscriber complete handler not supposed to be called.')),
      }),
    );

    expect(error).toEqual(42);
  });

  it('should map values to resolved promises and concatenate', async () => {
    // The index travels in the message: keyedDispatch passes none.
    const source = from([4, 3, 2, 1]).pipe(map((v, i) => ({ v, i })));
    const project = ({ v, i }: { v: number; i: number }) => from(Promise.resolve(v + i));

    const results = await lastValueFrom(
      source.pipe(keyedDispatch({ executor: executor(), key: oneKey, handle: project }), toArray()),
    );

    expect(results).toEqual([4, 4, 4, 4]);
  });

  it('should map values to rejected promises and concatenate', async () => {
    // The index travels in the message: keyedDispatch passes none.
    const source = from([4, 3, 2, 1]).pipe(map((v, i) => ({ v, i })));
    const project = ({ v, i }: { v: number; i: number }) => from(Promise.reject(`${v}-${i}`));

    const error = await new Promise((resolve, reject) =>
      source.pipe(keyedDispatch({ executor: executor(), key: oneKey, handle: project })).subscribe({
        next: () => reject(new Error('Subscriber next handler not supposed to be called.')),
        error: resolve,
        complete: () => reject(new Error('Subscriber complete handler not supposed to be called.')),
      }),
    );

    expect(error).toEqual('4-0');
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
        keyedDispatch({ executor: executor(), key: oneKey, handle: (value: number) => of(value) }),
        take(3),
      )
      .subscribe(() => {
        /* noop */
      });

    expect(sideEffects).toEqual([0, 1, 2]);
  });
});
