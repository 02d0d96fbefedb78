import { PartitionTracker } from '../../src/kafka/partition-tracker';
import { ReadyPartitions } from '../../src/kafka/ready-partitions';

/** Partitions 0… of one topic, each with `inFlight` messages in flight. */
function partitions(...inFlight: number[]): PartitionTracker[] {
  return inFlight.map((count, partition) => {
    const tracker = new PartitionTracker('orders', partition);
    tracker.inFlight = count;
    return tracker;
  });
}

/** Takes every partition out, in order, as their numbers. */
function drained(ready: ReadyPartitions): number[] {
  const order: number[] = [];
  for (let t = ready.next(); t !== undefined; t = ready.next()) order.push(t.partition);
  return order;
}

describe('ReadyPartitions', () => {
  it('gives out the partition with the fewest messages in flight first', () => {
    const ready = new ReadyPartitions();
    for (const tracker of partitions(3, 0, 7, 1)) ready.add(tracker);
    expect(drained(ready)).toEqual([1, 3, 0, 2]);
    expect(ready.next()).toBeUndefined();
  });

  it('gives out partitions with as many in flight in the order they were added, so they take turns', () => {
    const ready = new ReadyPartitions();
    const [a, b, c] = partitions(2, 2, 2);
    ready.add(b);
    ready.add(c);
    ready.add(a);
    expect(drained(ready)).toEqual([1, 2, 0]);
  });

  it('takes turns among partitions that each take one message a turn', () => {
    const ready = new ReadyPartitions();
    const trackers = partitions(0, 0, 0);
    for (const tracker of trackers) ready.add(tracker);
    const order: number[] = [];
    for (let i = 0; i < 7; i++) {
      const tracker = ready.next() as PartitionTracker;
      order.push(tracker.partition);
      tracker.inFlight++;
      ready.add(tracker);
    }
    expect(order).toEqual([0, 1, 2, 0, 1, 2, 0]);
  });

  it('moves a partition whose count in flight fell ahead of the others, behind those it now equals', () => {
    const ready = new ReadyPartitions();
    const [a, b, c] = partitions(4, 3, 5);
    for (const tracker of [a, b, c]) ready.add(tracker);
    c.inFlight = 3;
    ready.inFlightChanged(c);
    a.inFlight = 1;
    ready.inFlightChanged(a);
    expect(drained(ready)).toEqual([0, 1, 2]);
  });

  it('keeps its lists whole when a partition leaves the middle or the end of one', () => {
    const ready = new ReadyPartitions();
    const [a, b, c, d] = partitions(2, 2, 2, 2);
    for (const tracker of [a, b, c]) ready.add(tracker);
    b.inFlight = 1;
    ready.inFlightChanged(b);
    c.inFlight = 0;
    ready.inFlightChanged(c);
    ready.add(d);
    expect(drained(ready)).toEqual([2, 1, 0, 3]);
  });

  it('leaves a partition it does not hold where it is when its count changes', () => {
    const ready = new ReadyPartitions();
    const [a, b] = partitions(1, 2);
    ready.add(b);
    a.inFlight = 0;
    ready.inFlightChanged(a);
    expect(ready.has(a)).toBe(false);
    expect(drained(ready)).toEqual([1]);
  });

  it('says which partitions it holds, and holds none once cleared', () => {
    const ready = new ReadyPartitions();
    const [a, b, c] = partitions(0, 4, 4);
    ready.add(a);
    ready.add(b);
    expect([ready.has(a), ready.has(b), ready.has(c)]).toEqual([true, true, false]);
    ready.clear();
    expect([ready.has(a), ready.has(b)]).toEqual([false, false]);
    expect(ready.next()).toBeUndefined();
    ready.add(b);
    expect(drained(ready)).toEqual([1]);
  });

  it('gives out a partition added below the lowest it gave out before', () => {
    const ready = new ReadyPartitions();
    const [a, b, c] = partitions(5, 6, 0);
    ready.add(a);
    ready.add(b);
    expect(ready.next()).toBe(a);
    ready.add(c);
    expect(drained(ready)).toEqual([2, 1]);
  });
});
