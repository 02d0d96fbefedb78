import { KeyedExecutor, keyedDispatch } from 'keyed-dispatch';
import { from, lastValueFrom, observeOn, of, toArray } from 'rxjs';
import { map } from 'rxjs/operators';
import { within } from './shared-state';

describe('KeyedExecutor lanes as RxJS schedulers', () => {
  let executor: KeyedExecutor;
  beforeEach(() => {
    executor = new KeyedExecutor({ lanes: 3 });
  });
  afterEach(() => executor.close());

  it('lists one scheduler per lane, and a handler sees the lane of its index as ctx.scheduler', async () => {
    expect(executor.lanes).toHaveLength(3);
    const seen = await within(
      lastValueFrom(
        from(['a', 'b', 'c', 'd', 'e', 'f']).pipe(
          keyedDispatch({
            executor,
            key: (k) => k,
            handle: (_k, ctx) => [ctx.scheduler === executor.lanes[ctx.laneIndex]],
          }),
          toArray(),
        ),
      ),
      5000,
      'the output to complete',
    );
    expect(seen).toEqual([true, true, true, true, true, true]);
  });

  it('runs work put on a lane with observeOn in that lane: currentLane is that lane there, null outside', async () => {
    expect(executor.currentLane).toBeNull();
    const lane = executor.lanes[1];
    const observed = await within(
      lastValueFrom(
        of(1, 2, 3).pipe(
          observeOn(lane),
          map((n) => ({ n, onLane: executor.currentLane === lane })),
          toArray(),
        ),
      ),
      5000,
      'the values on the lane',
    );
    expect(observed).toEqual([
      { n: 1, onLane: true },
      { n: 2, onLane: true },
      { n: 3, onLane: true },
    ]);
    expect(executor.currentLane).toBeNull();
  });

  it('tells a handler it runs on its own lane through currentLane', async () => {
    const same = await within(
      lastValueFrom(
        from([1, 2, 3]).pipe(
          keyedDispatch({
            executor,
            key: (n) => n,
            handle: (_n, ctx) => [executor.currentLane === ctx.scheduler],
          }),
          toArray(),
        ),
      ),
      5000,
      'the output to complete',
    );
    expect(same).toEqual([true, true, true]);
  });
});
