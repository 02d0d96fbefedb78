import { fromIterable, type HandlerContext, KeyedExecutor, keyedDispatch } from 'keyed-dispatch';
import { lastValueFrom } from 'rxjs';
import { FIXTURES, type Msg, type Ran } from './lane-kinds';

const spin: (m: Msg, ctx: HandlerContext<string>) => Ran[] = require(FIXTURES).spin;

describe('long synchronous turns on event-loop lanes', () => {
  it('are reported to `onLongTurn` with the lane and the duration once they reach `longTurnMs`', async () => {
    const reports: Array<[number, number]> = [];
    const executor = new KeyedExecutor({
      lanes: 1,
      longTurnMs: 20,
      onLongTurn: (lane, ms) => reports.push([lane, ms]),
    });
    await lastValueFrom(
      fromIterable<Msg>([
        { key: 'quick', n: 1, spinMs: 0 },
        { key: 'slow', n: 1, spinMs: 40 },
      ]).pipe(keyedDispatch<Msg, string, Ran>({ executor, key: (m) => m.key, handle: spin })),
    );
    expect(reports).toHaveLength(1);
    expect(reports[0][0]).toBe(0);
    expect(reports[0][1]).toBeGreaterThanOrEqual(20);
    await executor.close();
  });

  it('are no longer reported once the executor is closed', async () => {
    const reports: number[] = [];
    const closed = new KeyedExecutor({
      lanes: 1,
      longTurnMs: 5,
      onLongTurn: (_lane, ms) => reports.push(ms),
    });
    await closed.close();
    const executor = new KeyedExecutor({ lanes: 1 });
    await lastValueFrom(
      fromIterable<Msg>([{ key: 'slow', n: 1, spinMs: 10 }]).pipe(
        keyedDispatch<Msg, string, Ran>({ executor, key: (m) => m.key, handle: spin }),
      ),
    );
    expect(reports).toEqual([]);
  });

  it('rejects an invalid threshold or listener, naming the option', () => {
    expect(() => new KeyedExecutor({ longTurnMs: 0, onLongTurn: () => {} })).toThrow(
      'KeyedExecutor: expected `longTurnMs` to be an integer >= 1, got 0 (number)',
    );
    expect(() => new KeyedExecutor({ onLongTurn: 5 as never })).toThrow(
      'expected `onLongTurn` to be a function, got 5 (number)',
    );
  });
});
