import {
  DEFAULT_METADATA_MAX_BYTES,
  decodeFinished,
  encodeFinished,
  type FinishedRun,
} from '../../src/kafka/finished-offsets';

describe('finished-offsets metadata', () => {
  it('round-trips finished runs above the committed offset', () => {
    const runs: FinishedRun[] = [
      { from: 1, to: 2 },
      { from: 5, to: 300 },
      { from: 301, to: 100_000 },
      { from: 2 ** 40, to: 2 ** 40 + 7 },
    ];
    const metadata = encodeFinished(runs, DEFAULT_METADATA_MAX_BYTES);
    expect(decodeFinished(metadata)).toEqual(runs);
  });

  it('stays within the size limit, keeping the lowest runs that fit', () => {
    // Every other offset finished: the worst case for runs.
    const runs: FinishedRun[] = [];
    for (let n = 1; n < 20_000; n += 2) runs.push({ from: n, to: n + 1 });
    const metadata = encodeFinished(runs, DEFAULT_METADATA_MAX_BYTES)!;
    expect(metadata.length).toBeLessThanOrEqual(DEFAULT_METADATA_MAX_BYTES);
    const kept = decodeFinished(metadata);
    expect(kept.length).toBeGreaterThan(1000);
    expect(kept.length).toBeLessThan(runs.length);
    expect(kept).toEqual(runs.slice(0, kept.length));
  });

  it('degrades to a plain commit when not even one run fits, or none finished', () => {
    expect(encodeFinished([{ from: 1, to: 2 }], 4)).toBeUndefined();
    expect(encodeFinished([], DEFAULT_METADATA_MAX_BYTES)).toBeUndefined();
  });

  it('reads metadata it did not write, or malformed metadata, as nothing finished', () => {
    expect(decodeFinished(null)).toEqual([]);
    expect(decodeFinished('')).toEqual([]);
    expect(decodeFinished('written by another tool')).toEqual([]);
    expect(decodeFinished('kd1:gA==')).toEqual([]); // a varint cut short
    expect(decodeFinished('kd1:AQ==')).toEqual([]); // a gap without a length
    expect(decodeFinished('kd1:AAE=')).toEqual([]); // a run at the committed offset itself
  });
});
