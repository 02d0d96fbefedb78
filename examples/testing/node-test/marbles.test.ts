import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { KeyedExecutor, keyedDispatch } from 'keyed-dispatch';
import type { Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';

describe('a handler tested with marbles', () => {
  const executor = new KeyedExecutor({ lanes: 2 });
  after(() => executor.close());

  it("runs a key's messages one at a time and different keys at once", () => {
    const scheduler = new TestScheduler((actual, expected) => assert.deepEqual(actual, expected));
    scheduler.run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const source = hot('-a-bc-----|', { a: 'x1', b: 'x2', c: 'y1' }); // the key is the first letter
      const handlers: Record<string, Observable<string>> = {
        x1: cold('---(A|)'),
        x2: cold('--(B|)'),
        y1: cold('-(C|)'),
      };
      const out = source.pipe(keyedDispatch({ executor, key: (m) => m[0], handle: (m) => handlers[m] }));
      expectObservable(out).toBe('----ACB---|'); // x2 waits for x1; y1, another key, overtakes x2
      expectSubscriptions(source.subscriptions).toBe('^---------!');
    });
  });
});
