/**
 * The overhead floor: a minimal hand-written keyed mailbox loop on one thread — a Map of ring-buffer
 * queues reused in place, turns of `throughput`, at most `maxInFlight` messages taken from the source,
 * refilled in batches of maxInFlight/16. No Observables, no lanes, no fairness across lanes.
 */
export function handMailboxLoop<T>(
  source: Iterator<T>,
  key: (m: T) => unknown,
  handle: (m: T) => void,
  maxInFlight = 256,
  throughput = 16,
): number {
  const batch = Math.max(1, maxInFlight >> 4);
  const queues = new Map<unknown, Ring<T>>();
  const pool: Ring<T>[] = [];
  const ready = new Ring<Ring<T> & { k?: unknown }>();
  let inFlight = 0;
  let done = false;
  let handled = 0;
  const take = (n: number) => {
    for (let i = 0; i < n; i++) {
      const step = source.next();
      if (step.done) {
        done = true;
        return;
      }
      const m = step.value;
      const k = key(m);
      let q = queues.get(k) as (Ring<T> & { k?: unknown }) | undefined;
      inFlight++;
      if (q === undefined) {
        q = (pool.pop() ?? new Ring<T>()) as Ring<T> & { k?: unknown };
        q.k = k;
        queues.set(k, q);
        q.push(m);
        ready.push(q);
      } else {
        q.push(m);
      }
    }
  };
  take(maxInFlight);
  let finished = 0;
  while (ready.size > 0) {
    const q = ready.shift() as Ring<T> & { k?: unknown };
    for (let i = 0; i < throughput && q.size > 0; i++) {
      handle(q.shift() as T);
      handled++;
      inFlight--;
      if (++finished === batch) {
        finished = 0;
        if (!done) take(batch);
      }
    }
    if (q.size > 0) ready.push(q);
    else {
      queues.delete(q.k);
      pool.push(q);
    }
  }
  return handled;
}

class Ring<T> {
  private items: (T | undefined)[] = new Array(4);
  private head = 0;
  size = 0;
  push(v: T): void {
    if (this.size === this.items.length) {
      const next = new Array(this.items.length * 2);
      for (let i = 0; i < this.size; i++) next[i] = this.items[(this.head + i) % this.items.length];
      this.items = next;
      this.head = 0;
    }
    this.items[(this.head + this.size) & (this.items.length - 1)] = v;
    this.size++;
  }
  shift(): T | undefined {
    const v = this.items[this.head];
    this.items[this.head] = undefined;
    this.head = (this.head + 1) & (this.items.length - 1);
    this.size--;
    return v;
  }
}
