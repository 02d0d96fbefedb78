import { encodeFinished } from '../../src/kafka/finished-offsets';
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
  reader.inherit(offset, metadata ?? null, 4096);
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

/** How long one run of `work` takes, in ms. */
function timed(work: () => void): number {
  const start = performance.now();
  work();
  return performance.now() - start;
}

/**
 * Asserts that `large` takes at most `factor` times as long as `small`, plus 5 ms for timer noise: by the
 * median of 7 pairs of runs taken in turn, so both see the same load and a run that a busy machine held
 * back (a time slice lost, a collection) decides nothing.
 */
function expectAtMost(factor: number, small: () => void, large: () => void): void {
  const excess: number[] = [];
  for (let i = 0; i < 7; i++) {
    const smallMs = timed(small);
    excess.push(timed(large) - (factor * smallMs + 5));
  }
  excess.sort((a, b) => a - b);
  expect(excess[3]).toBeLessThan(0);
}

/**
 * Asserts that `work(8 * n)` takes about 8 times as long as `work(n)`, not 64 times (quadratic): within
 * a factor of 3 of linear growth.
 */
function expectLinear(work: (n: number) => void, n: number): void {
  expectAtMost(
    3 * 8,
    () => work(n),
    () => work(8 * n),
  );
}

/** Metadata recording every other offset above 0 as finished: `runs` runs, the worst case for its size. */
function scattered(runs: number): string {
  const list = Array.from({ length: runs }, (_, i) => ({ from: 2 * i + 1, to: 2 * i + 2 }));
  return encodeFinished(list, Number.MAX_SAFE_INTEGER, '0') as string;
}

describe('PartitionTracker costs', () => {
  it('reads commit metadata longer than its bound as nothing finished', () => {
    const metadata = scattered(10_000);
    const reader = new PartitionTracker('orders', 0);
    reader.inherit('0', metadata, metadata.length - 1);
    expect(range(0, 100).filter((o) => reader.skips(String(o)))).toEqual([]);
  });

  it("reads a previous owner's metadata back, skipping what it records, in time linear in its runs", () => {
    // A raised `offset.metadata.max.bytes` lets metadata reach a megabyte: hundreds of thousands of runs.
    const readBack = (runs: number) => {
      const metadata = scattered(runs);
      const tracker = new PartitionTracker('orders', 0);
      tracker.inherit('0', metadata, metadata.length);
      const last = 2 * runs;
      for (let offset = 0; offset <= last; offset++) {
        const seq = tracker.receive(String(offset));
        // What it records was skipped; the rest ran, in order here.
        tracker.skips(String(offset));
        tracker.finish(seq);
        if (offset % Math.ceil(last / 8) === 0) tracker.commitPoint(metadata.length);
      }
    };
    expectLinear(readBack, 5_000);
  });

  it('reads only as many recorded runs for a commit as fit in its metadata', () => {
    // A previous owner recorded `runs` runs; the committed offset has run again, nothing above it yet.
    const commitsAfterInheriting = (runs: number) => {
      const metadata = scattered(runs);
      const tracker = new PartitionTracker('orders', 0);
      tracker.inherit('0', metadata, metadata.length);
      tracker.finish(tracker.receive('0'));
      return () => {
        for (let i = 0; i < 200; i++) tracker.commitPoint(4096);
      };
    };
    const small = commitsAfterInheriting(1_000);
    const large = commitsAfterInheriting(100_000);
    expectAtMost(3, small, large);
  });

  it.each([
    ['failed and waits for redelivery', (tracker: PartitionTracker) => tracker.fail(0)],
    ['still runs', () => {}],
  ])(
    'a message at the head of its partition that %s, with N later messages finishing behind it, costs O(N) over N commits',
    (_, atHead) => {
      const finishBehind = (n: number) => {
        const tracker = new PartitionTracker('orders', 0);
        tracker.receive('0');
        atHead(tracker);
        for (let offset = 1; offset <= n; offset++) {
          tracker.finish(tracker.receive(String(offset)));
          tracker.commitPoint(4096);
        }
        expect(tracker.position()).toBe('0');
      };
      expectLinear(finishBehind, 500);
    },
  );
});

describe('PartitionTracker lag', () => {
  it('counts from the first unfinished offset to the high watermark, whatever finished above it', () => {
    const tracker = trackerOf(range(100, 110));
    expect(tracker.lag()).toBeNull();
    tracker.highWatermark = '112';
    // Nothing finished: from the first received offset.
    expect(tracker.lag()).toBe(12);
    tracker.finish(0);
    tracker.finish(2);
    expect(tracker.lag()).toBe(11);
    tracker.finish(1);
    expect(tracker.lag()).toBe(9);
    for (const seq of range(3, 10)) tracker.finish(seq);
    expect(tracker.lag()).toBe(2);
  });

  it('counts from the committed offset before anything was received, and offsets beyond a safe integer exactly', () => {
    const tracker = new PartitionTracker('orders', 0);
    tracker.inherit('9007199254740993', null, 4096);
    tracker.highWatermark = '9007199254741000';
    expect(tracker.lag()).toBe(7);
  });
});
