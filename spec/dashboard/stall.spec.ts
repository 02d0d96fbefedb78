import { stalledBy, stallThreshold } from '../../src/dashboard/stall';

const snapshot = (inFlight: number, maxInFlight: number, hotKeys: Array<[string, number]>) => ({
  inFlight,
  maxInFlight,
  hotKeys: hotKeys.map(([key, backlog]) => ({ key, backlog })),
});

describe('the stall threshold and the key stalling the window', () => {
  it('puts the threshold one intake batch (maxInFlight / 16, at least 1) below the window', () => {
    expect(stallThreshold(256)).toBe(240);
    expect(stallThreshold(16)).toBe(15);
    expect(stallThreshold(8)).toBe(7);
    expect(stallThreshold(1)).toBe(0);
  });

  it('names the key holding at least half of a window filled above the threshold', () => {
    expect(
      stalledBy(
        snapshot(250, 256, [
          ['hot', 200],
          ['b', 1],
        ]),
      ),
    ).toEqual({ key: 'hot', backlog: 200 });
    expect(stalledBy(snapshot(241, 256, [['hot', 121]]))).toEqual({ key: 'hot', backlog: 121 });
  });

  it('names no key while intake still flows, or when the window is full of many keys', () => {
    expect(stalledBy(snapshot(240, 256, [['hot', 240]]))).toBeNull();
    expect(
      stalledBy(
        snapshot(256, 256, [
          ['a', 100],
          ['b', 100],
        ]),
      ),
    ).toBeNull();
    expect(stalledBy(snapshot(0, 0, []))).toBeNull();
  });
});
