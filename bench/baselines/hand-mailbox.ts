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

/**
 * The overhead floor for Promise handlers: a minimal hand-written loop over an array. At most
 * `maxInFlight` messages unfinished; a key's later messages wait in its array, and each handler's
 * settlement starts the key's next message right in the `then` callback, then takes more from the
 * source. No lanes, no fairness, no turn limits, no errors handled. Resolves to the values the handlers
 * returned, counted.
 */
export function handPromiseLoop<T>(
  input: readonly T[],
  key: (m: T) => unknown,
  handle: (m: T) => Promise<T>,
  maxInFlight = 256,
): Promise<number> {
  return new Promise((resolve) => {
    // A key with a running message maps to null, or to the messages waiting behind it.
    const waiting = new Map<unknown, T[] | null>();
    let taken = 0;
    let inFlight = 0;
    let values = 0;
    const take = () => {
      while (inFlight < maxInFlight && taken < input.length) {
        const m = input[taken++];
        inFlight++;
        const k = key(m);
        const queue = waiting.get(k);
        if (queue === undefined) {
          waiting.set(k, null);
          handle(m).then(finished);
        } else if (queue === null) waiting.set(k, [m]);
        else queue.push(m);
      }
    };
    // The handlers return their message: its key says which queue goes on.
    const finished = (m: T) => {
      values++;
      inFlight--;
      const k = key(m);
      const queue = waiting.get(k);
      if (queue) {
        const next = queue.shift() as T;
        if (queue.length === 0) waiting.set(k, null);
        handle(next).then(finished);
      } else waiting.delete(k);
      if (values === input.length) resolve(values);
      else take();
    };
    take();
  });
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
