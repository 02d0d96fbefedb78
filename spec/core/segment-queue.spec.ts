import { SegmentQueue } from '../../src/internal/segment-queue';

describe('SegmentQueue', () => {
  it('shifts what was pushed in order, across many segments and while both ends move', () => {
    const queue = new SegmentQueue<number>();
    const out: number[] = [];
    let next = 0;
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 997; i++) queue.push(next++);
      for (let i = 0; i < 613; i++) out.push(queue.shift() as number);
    }
    while (queue.size > 0) out.push(queue.shift() as number);
    expect(out).toEqual(Array.from({ length: next }, (_, i) => i));
    expect(queue.shift()).toBeUndefined();
  });

  it('keeps undefined items and counts them', () => {
    const queue = new SegmentQueue<number | undefined>();
    queue.push(undefined);
    queue.push(1);
    expect(queue.size).toBe(2);
    expect(queue.removeWhere((v) => v === 1)).toEqual([1]);
    expect(queue.toArray()).toEqual([undefined]);
  });

  it('removes the items a predicate accepts and keeps the others in order', () => {
    const queue = new SegmentQueue<number>();
    for (let i = 0; i < 5000; i++) queue.push(i);
    queue.shift();
    const removed = queue.removeWhere((v) => v % 3 === 0);
    expect(removed).toEqual(Array.from({ length: 1666 }, (_, i) => 3 * (i + 1)));
    expect(queue.toArray()).toEqual(
      Array.from({ length: 5000 }, (_, i) => i).filter((v) => v > 0 && v % 3 !== 0),
    );
    expect(queue.size).toBe(3333);
    queue.clear();
    expect(queue.size).toBe(0);
    expect(queue.toArray()).toEqual([]);
  });
});
