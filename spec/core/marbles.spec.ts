import { KeyedExecutor, keyedDispatch } from 'keyed-dispatch';
import { map, timer } from 'rxjs';
import type { ColdObservable } from 'rxjs/internal/testing/ColdObservable';
import { TestScheduler } from 'rxjs/testing';

/** Messages are 'x1', 'x2', 'y1': the key is the first letter. */
const key = (m: string) => m[0];

function testScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

describe('keyedDispatch (marbles)', () => {
  let executor: KeyedExecutor;
  beforeEach(() => {
    executor = new KeyedExecutor({ lanes: 2 });
  });
  afterEach(() => executor.close());

  it('starts the next message of a key only after the previous handler completes', () => {
    testScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const source = hot('-a-b------|', { a: 'x1', b: 'x2' });
      const handlers: Record<string, ColdObservable<string>> = { x1: cold('---(A|)'), x2: cold('--(B|)') };
      const expected = '  ----A-B---|';
      const out = source.pipe(keyedDispatch({ executor, key, handle: (m: string) => handlers[m] }));
      expectObservable(out).toBe(expected);
      expectSubscriptions(handlers.x1.subscriptions).toBe('-^--!');
      expectSubscriptions(handlers.x2.subscriptions).toBe('----^-!');
    });
  });

  it('runs handlers of different keys at the same time', () => {
    testScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const source = hot('-ab-------|', { a: 'x1', b: 'y1' });
      const handlers: Record<string, ColdObservable<string>> = { x1: cold('----(A|)'), y1: cold('-(B|)') };
      const expected = '  ---B-A----|';
      const out = source.pipe(keyedDispatch({ executor, key, handle: (m: string) => handlers[m] }));
      expectObservable(out).toBe(expected);
      expectSubscriptions(handlers.x1.subscriptions).toBe('-^---!');
      expectSubscriptions(handlers.y1.subscriptions).toBe('--^!');
    });
  });

  it('emits every value of a handler, in order', () => {
    testScheduler().run(({ hot, cold, expectObservable }) => {
      const source = hot('-a-------|', { a: 'x1' });
      const handler = cold(' -A-B-C|');
      const expected = '  --A-B-C--|';
      expectObservable(source.pipe(keyedDispatch({ executor, key, handle: () => handler }))).toBe(expected);
    });
  });

  it('completes only when the source has completed and every handler has', () => {
    testScheduler().run(({ hot, cold, expectObservable }) => {
      const source = hot('-a|', { a: 'x1' });
      const handler = cold(' ---(A|)');
      const expected = '  ----(A|)';
      expectObservable(source.pipe(keyedDispatch({ executor, key, handle: () => handler }))).toBe(expected);
    });
  });

  it('errors when a handler errors, cancelling the other handlers and the source', () => {
    testScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const source = hot('-ab-----', { a: 'x1', b: 'y1' });
      const handlers: Record<string, ColdObservable<string>> = {
        x1: cold('--#', undefined, 'boom'),
        y1: cold('------(B|)'),
      };
      const expected = '  ---#';
      const out = source.pipe(keyedDispatch({ executor, key, handle: (m: string) => handlers[m] }));
      expectObservable(out).toBe(expected, undefined, 'boom');
      expectSubscriptions(source.subscriptions).toBe('^--!');
      expectSubscriptions(handlers.y1.subscriptions).toBe('--^!');
    });
  });

  it('errors when a handler throws synchronously', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      const source = hot('-a--', { a: 'x1' });
      const handle = () => {
        throw 'thrown';
      };
      expectObservable(source.pipe(keyedDispatch({ executor, key, handle }))).toBe('-#', undefined, 'thrown');
    });
  });

  it('errors with the key selector error, after unsubscribing running handlers', () => {
    testScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const source = hot('-a-b----', { a: 'x1', b: 'bad' });
      const handler = cold(' -----(A|)');
      const failingKey = (m: string) => {
        if (m === 'bad') throw 'no key';
        return m[0];
      };
      const out = source.pipe(keyedDispatch({ executor, key: failingKey, handle: () => handler }));
      expectObservable(out).toBe('---#', undefined, 'no key');
      expectSubscriptions(handler.subscriptions).toBe('-^-!');
      expectSubscriptions(source.subscriptions).toBe('^--!');
    });
  });

  it('cancels running handlers and the source when the output is unsubscribed', () => {
    testScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const source = hot('-a-b-----', { a: 'x1', b: 'y1' });
      const handler = cold(' -------(A|)');
      const out = source.pipe(keyedDispatch({ executor, key, handle: () => handler }));
      expectObservable(out, '^----!').toBe('------');
      expectSubscriptions(source.subscriptions).toBe('^----!');
      expectSubscriptions(handler.subscriptions).toBe(['-^---!', '---^-!']);
    });
    expect(executor.liveMailboxes).toBe(0);
  });

  it('times handlers that wait on the lane scheduler in virtual time', () => {
    testScheduler().run(({ hot, expectObservable }) => {
      const source = hot('-a-b----|', { a: 'x1', b: 'x2' });
      const out = source.pipe(
        keyedDispatch({
          executor,
          key,
          handle: (m: string, ctx) => timer(2, ctx.scheduler).pipe(map(() => m.toUpperCase())),
        }),
      );
      expectObservable(out).toBe('---a-b--|', { a: 'X1', b: 'X2' });
    });
  });
});
