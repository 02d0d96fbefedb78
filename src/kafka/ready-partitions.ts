import type { PartitionTracker } from './partition-tracker';

/**
 * The partitions with messages to deliver, in the order the receiver takes them: the one with the fewest
 * messages in flight first, partitions with as many in turn. Each partition with a backlog is so given
 * about an equal share of the dispatcher's window, and one whose messages wait behind a few busy keys is
 * given no more than its share while the others' keys could run.
 *
 * A partition is in the list of its count in flight, so adding, taking out and moving one cost O(1);
 * `next` may step over empty lists, at most up to the largest count in flight. The places live on the
 * trackers (`readyAt`, `readyPrev`, `readyNext`), and only this class writes them.
 */
export class ReadyPartitions {
  /** Each list's first and last partition, by count in flight. */
  private readonly first: Array<PartitionTracker | null> = [];
  private readonly last: Array<PartitionTracker | null> = [];
  /** No list below this one has a partition. */
  private lowest = 0;
  private size = 0;

  has(tracker: PartitionTracker): boolean {
    return tracker.readyAt >= 0;
  }

  /** Adds the partition, after those with as many in flight. */
  add(tracker: PartitionTracker): void {
    const at = tracker.inFlight;
    while (this.first.length <= at) {
      this.first.push(null);
      this.last.push(null);
    }
    const before = this.last[at];
    tracker.readyAt = at;
    tracker.readyPrev = before;
    tracker.readyNext = null;
    if (before === null) this.first[at] = tracker;
    else before.readyNext = tracker;
    this.last[at] = tracker;
    if (at < this.lowest) this.lowest = at;
    this.size++;
  }

  /** Takes out the partition with the fewest in flight; undefined when there is none. */
  next(): PartitionTracker | undefined {
    if (this.size === 0) return undefined;
    while (this.first[this.lowest] === null) this.lowest++;
    const tracker = this.first[this.lowest] as PartitionTracker;
    this.remove(tracker);
    return tracker;
  }

  /** The partition's count in flight changed: if it is here, it moves to the end of its new list. */
  inFlightChanged(tracker: PartitionTracker): void {
    if (tracker.readyAt < 0 || tracker.readyAt === tracker.inFlight) return;
    this.remove(tracker);
    this.add(tracker);
  }

  clear(): void {
    while (this.next() !== undefined);
  }

  private remove(tracker: PartitionTracker): void {
    const { readyAt: at, readyPrev: prev, readyNext: next } = tracker;
    if (prev === null) this.first[at] = next;
    else prev.readyNext = next;
    if (next === null) this.last[at] = prev;
    else next.readyPrev = prev;
    tracker.readyAt = -1;
    tracker.readyPrev = null;
    tracker.readyNext = null;
    this.size--;
  }
}
