import { PartitionTracker } from '../../src/kafka/partition-tracker';

/** A tracker that received `offsets` in order. */
function trackerOf(offsets: number[]): PartitionTracker {
  const tracker = new PartitionTracker('orders', 0);
  for (const offset of offsets) tracker.receive(String(offset));
  return tracker;
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

/** The offsets in `[from, to)` a tracker that inherited `offset` and `metadata` skips. */
function skipped(offset: string, metadata: string | undefined, from: number, to: number): number[] {
  const reader = new PartitionTracker('orders', 0);
  reader.inherit(offset, metadata ?? null);
  return range(from, to).filter((o) => reader.skips(String(o)));
}

describe('PartitionTracker commit metadata', () => {
  it('lets a later owner skip the offsets above the committed one that finished', () => {
    const writer = trackerOf(range(100, 120));
    for (let seq = 1; seq < 20; seq++) writer.finish(seq);
    const point = writer.commitPoint(4096);
    expect(point?.offset).toBe('100');
    expect(skipped('100', point?.metadata, 100, 125)).toEqual(range(101, 120));
  });

  it('ignores metadata found with another committed offset (copied along with an offset a mirror translated)', () => {
    // Upstream, 100 never finished and 101–119 did; the group's offset on a mirror became 0, with the
    // same metadata. Skipping 1–19 there would settle records that never ran.
    const writer = trackerOf(range(100, 120));
    for (let seq = 1; seq < 20; seq++) writer.finish(seq);
    const { metadata } = writer.commitPoint(4096)!;
    expect(skipped('0', metadata, 0, 125)).toEqual([]);
    expect(skipped('101', metadata, 0, 125)).toEqual([]);
  });

  it('records nothing finished above a message that failed and waits for redelivery, so its key replays in order', () => {
    // Offset 0 (key a) failed and is redelivered after a restart; 1 (key a again) finished after it. If
    // the next owner skipped 1, key a's effects would end up in the order 1, 0.
    const writer = trackerOf(range(0, 4));
    writer.fail(0);
    for (let seq = 1; seq < 4; seq++) writer.finish(seq);
    const point = writer.commitPoint(4096);
    expect(point?.offset).toBe('0');
    expect(skipped('0', point?.metadata, 0, 10)).toEqual([]);
  });

  it('still records what finished below the lowest failed message', () => {
    const writer = trackerOf(range(0, 6));
    writer.fail(3);
    for (const seq of [1, 2, 4, 5]) writer.finish(seq);
    const point = writer.commitPoint(4096);
    expect(point?.offset).toBe('0');
    expect(skipped('0', point?.metadata, 0, 10)).toEqual([1, 2]);
  });
});
