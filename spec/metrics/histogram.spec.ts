import { Histogram } from 'keyed-dispatch/metrics';

describe('Histogram', () => {
  it('reports percentiles within 3.2% of the exact values', () => {
    const h = new Histogram();
    for (let i = 1; i <= 10_000; i++) h.record(i / 100); // 0.01 ms … 100 ms, uniform
    const s = h.summary();
    expect(s.count).toBe(10_000);
    expect(s.maxMs).toBe(100);
    expect(s.meanMs).toBeCloseTo(50.005, 6);
    for (const [p, exact] of [
      [50, 50],
      [90, 90],
      [99, 99],
    ] as const) {
      expect(Math.abs(h.percentileMs(p) - exact) / exact).toBeLessThan(0.032);
    }
  });

  it('resolves single microseconds below 32 µs', () => {
    const h = new Histogram();
    for (const us of [1, 2, 3, 31]) h.record(us / 1000);
    expect(h.percentileMs(25)).toBe(0.001);
    expect(h.percentileMs(50)).toBe(0.002);
    expect(h.percentileMs(100)).toBe(0.031);
  });

  it('gives the recordings of a window as the difference from an earlier copy', () => {
    const h = new Histogram();
    for (let i = 0; i < 1000; i++) h.record(1);
    const before = h.copy();
    for (let i = 0; i < 10; i++) h.record(200);
    const window = h.since(before).summary();
    expect(window.count).toBe(10);
    expect(window.meanMs).toBeCloseTo(200, 6);
    expect(Math.abs(window.p50Ms - 200) / 200).toBeLessThan(0.032);
    expect(h.summary().p50Ms).toBeCloseTo(1, 1);
  });

  it('summarizes an empty histogram as zeros', () => {
    expect(new Histogram().summary()).toEqual({
      count: 0,
      meanMs: 0,
      p50Ms: 0,
      p90Ms: 0,
      p99Ms: 0,
      maxMs: 0,
    });
  });

  it('puts values beyond its range into its last bucket and keeps the exact maximum', () => {
    const h = new Histogram();
    h.record(3_000_000);
    expect(h.summary().maxMs).toBe(3_000_000);
    expect(h.percentileMs(100)).toBeGreaterThan(2_000_000);
  });
});
