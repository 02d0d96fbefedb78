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
    const metadata = encodeFinished(runs, DEFAULT_METADATA_MAX_BYTES, '0');
    expect(decodeFinished(metadata, '0')).toEqual(runs);
  });

  it('reads metadata that librdkafka committed with its terminating NUL', () => {
    const runs: FinishedRun[] = [{ from: 2, to: 9 }];
    const metadata = encodeFinished(runs, DEFAULT_METADATA_MAX_BYTES, '41')!;
    expect(decodeFinished(`${metadata}\0`, '41')).toEqual(runs);
    expect(decodeFinished(`${metadata}\0`, '41', metadata.length)).toEqual(runs);
  });

  it('stays within the size limit, keeping the lowest runs that fit', () => {
    // Every other offset finished: the worst case for runs.
    const runs: FinishedRun[] = [];
    for (let n = 1; n < 20_000; n += 2) runs.push({ from: n, to: n + 1 });
    const metadata = encodeFinished(runs, DEFAULT_METADATA_MAX_BYTES, '0')!;
    expect(metadata.length).toBeLessThanOrEqual(DEFAULT_METADATA_MAX_BYTES);
    const kept = decodeFinished(metadata, '0');
    expect(kept.length).toBeGreaterThan(1000);
    expect(kept.length).toBeLessThan(runs.length);
    expect(kept).toEqual(runs.slice(0, kept.length));
  });

  it('degrades to a plain commit when not even one run fits, or none finished', () => {
    expect(encodeFinished([{ from: 1, to: 2 }], 8, '0')).toBeUndefined();
    expect(encodeFinished([], DEFAULT_METADATA_MAX_BYTES, '0')).toBeUndefined();
  });

  it('counts the committed offset into the size limit', () => {
    const metadata = encodeFinished([{ from: 1, to: 2 }], 12, '0');
    expect(metadata).toBeDefined();
    expect(metadata!.length).toBeLessThanOrEqual(12);
    expect(encodeFinished([{ from: 1, to: 2 }], 12, '9223372036854775000')).toBeUndefined();
  });

  it('holds only for the committed offset it was written for', () => {
    const metadata = encodeFinished([{ from: 2, to: 5 }], DEFAULT_METADATA_MAX_BYTES, '9223372036854775000');
    expect(decodeFinished(metadata, '9223372036854775000')).toEqual([{ from: 2, to: 5 }]);
    expect(decodeFinished(metadata, '0')).toEqual([]);
    expect(decodeFinished(metadata, '9223372036854775001')).toEqual([]);
  });

  it('keeps the runs before one that is out of order or empty (offsets that went backwards)', () => {
    const runs: FinishedRun[] = [
      { from: 3, to: 5 },
      { from: 2, to: 9 },
      { from: 20, to: 30 },
    ];
    expect(decodeFinished(encodeFinished(runs, DEFAULT_METADATA_MAX_BYTES, '7'), '7')).toEqual([runs[0]]);
    expect(encodeFinished([{ from: 0, to: 4 }], DEFAULT_METADATA_MAX_BYTES, '7')).toBeUndefined();
    expect(encodeFinished([{ from: 4, to: 4 }], DEFAULT_METADATA_MAX_BYTES, '7')).toBeUndefined();
  });

  it('reads metadata it did not write, or malformed metadata, as nothing finished', () => {
    expect(decodeFinished(null, '0')).toEqual([]);
    expect(decodeFinished('', '0')).toEqual([]);
    expect(decodeFinished('written by another tool', '0')).toEqual([]);
    expect(decodeFinished('kd1:AQE=', '0')).toEqual([]); // the earlier format, which named no offset
    expect(decodeFinished('kd2:0:gA==', '0')).toEqual([]); // a varint cut short
    expect(decodeFinished('kd2:0:AQ==', '0')).toEqual([]); // a gap without a length
    expect(decodeFinished('kd2:0:AAE=', '0')).toEqual([]); // a run at the committed offset itself
    expect(decodeFinished('kd2:0:A Q E=', '0')).toEqual([]); // not base64 as written
    // A length past 2^53: offsets a number cannot hold exactly.
    expect(
      decodeFinished(
        `kd2:0:${Buffer.from([1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]).toString('base64')}`,
        '0',
      ),
    ).toEqual([]);
    expect(
      decodeFinished(`kd2:0:${Buffer.from([1, ...new Array(40).fill(0x80), 1]).toString('base64')}`, '0'),
    ).toEqual([]);
  });
});
