import { TestScheduler } from 'rxjs/testing';
import { keyedDispatch, KeyedExecutor } from 'keyed-dispatch';

describe('smoke', () => {
  it('serializes per key under TestScheduler', () => {
    const ts = new TestScheduler((a, b) => expect(a).toEqual(b));
    ts.run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const executor = new KeyedExecutor({ workers: 2 });
      const source = hot('  -a-b-c-------|', { a: 'x1', b: 'x2', c: 'y1' });
      const h = {
        x1: cold('---(A|)'), x2: cold('---(B|)'), y1: cold('--(C|)'),
      } as const;
      const out = source.pipe(keyedDispatch({ executor, key: (m: string) => m[0], handle: (m: string) => h[m as keyof typeof h] }));
      expectObservable(out).toBe('----A--(BC)--|');
      expectSubscriptions(h.x1.subscriptions).toBe('-^--!');
      expectSubscriptions(h.x2.subscriptions).toBe('----^--!');
    });
  });
});
