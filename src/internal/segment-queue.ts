/** Slots per segment. */
const SEGMENT = 1024;

class Segment<T> {
  readonly items: (T | undefined)[] = new Array(SEGMENT);
  /** Next slot to shift. */
  first = 0;
  /** Next slot to fill. */
  end = 0;
  next: Segment<T> | null = null;
}

/**
 * A FIFO of fixed-size segments, for a queue that can grow by a burst: pushing never copies what is
 * queued (a doubling ring copied a million messages about twice on the way up), and each segment is
 * dropped once drained, so the burst's memory goes back as it is consumed.
 */
export class SegmentQueue<T> {
  private head = new Segment<T>();
  private tail = this.head;
  /** Number of queued items. */
  size = 0;

  push(item: T): void {
    let tail = this.tail;
    if (tail.end === SEGMENT) {
      tail = new Segment<T>();
      this.tail.next = tail;
      this.tail = tail;
    }
    tail.items[tail.end++] = item;
    this.size++;
  }

  shift(): T | undefined {
    if (this.size === 0) return undefined;
    const head = this.head;
    const item = head.items[head.first];
    head.items[head.first++] = undefined;
    this.size--;
    if (head.first === head.end) {
      if (head.next === null) {
        head.first = 0;
        head.end = 0;
      } else this.head = head.next;
    }
    return item;
  }

  /** Removes every item `matches` accepts, keeping the others in order; returns the removed ones. */
  removeWhere(matches: (item: T) => boolean): T[] {
    const removed: T[] = [];
    const kept = new SegmentQueue<T>();
    for (let n = this.size; n > 0; n--) {
      const item = this.shift() as T;
      if (matches(item)) removed.push(item);
      else kept.push(item);
    }
    this.head = kept.head;
    this.tail = kept.tail;
    this.size = kept.size;
    return removed;
  }

  clear(): void {
    this.head = new Segment<T>();
    this.tail = this.head;
    this.size = 0;
  }

  toArray(): T[] {
    const out: T[] = [];
    for (let segment: Segment<T> | null = this.head; segment !== null; segment = segment.next) {
      for (let i = segment.first; i < segment.end; i++) out.push(segment.items[i] as T);
    }
    return out;
  }
}
