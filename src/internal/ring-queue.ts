/**
 * A FIFO on a power-of-two ring buffer that is reused in place: pushing and shifting allocate nothing
 * once the ring has grown to its working size, so a long-lived queue makes no garbage.
 */
export class RingQueue<T> {
  private items: (T | undefined)[];
  private head = 0;
  private mask: number;
  /** Number of queued items. */
  size = 0;

  constructor(capacity = 4) {
    let c = 2;
    while (c < capacity) c <<= 1;
    this.items = new Array(c);
    this.mask = c - 1;
  }

  push(item: T): void {
    if (this.size === this.items.length) this.grow();
    this.items[(this.head + this.size) & this.mask] = item;
    this.size++;
  }

  shift(): T | undefined {
    if (this.size === 0) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head = (this.head + 1) & this.mask;
    this.size--;
    return item;
  }

  peek(): T | undefined {
    return this.size === 0 ? undefined : this.items[this.head];
  }

  /** Removes every item `matches` accepts, keeping the others in order; returns the removed ones. */
  removeWhere(matches: (item: T) => boolean): T[] {
    const removed: T[] = [];
    const n = this.size;
    for (let i = 0; i < n; i++) {
      const item = this.shift() as T;
      if (matches(item)) removed.push(item);
      else this.push(item);
    }
    return removed;
  }

  /** `clear` for a queue that is usually empty already: a no-op then, unless it had grown past `keep` slots. */
  trim(keep = 64): void {
    if (this.size > 0 || this.items.length > keep) this.clear(keep);
  }

  /** Empties the queue; gives back its memory when it had grown past `keep` slots. */
  clear(keep = 64): void {
    if (this.items.length > keep) {
      this.items = new Array(4);
      this.mask = 3;
    } else {
      for (let i = 0; i < this.size; i++) this.items[(this.head + i) & this.mask] = undefined;
    }
    this.head = 0;
    this.size = 0;
  }

  toArray(): T[] {
    const out: T[] = [];
    for (let i = 0; i < this.size; i++) out.push(this.items[(this.head + i) & this.mask] as T);
    return out;
  }

  private grow(): void {
    const next: (T | undefined)[] = new Array(this.items.length * 2);
    for (let i = 0; i < this.size; i++) next[i] = this.items[(this.head + i) & this.mask];
    this.items = next;
    this.head = 0;
    this.mask = next.length - 1;
  }
}
