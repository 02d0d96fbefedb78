import PQueue from 'p-queue';

/**
 * p-queue per key, as an application would write it: a Map of key → `PQueue({ concurrency: 1 })` and a
 * global bound on unfinished messages. A key's queue is forgotten when its last message finishes, so
 * distinct keys do not pile up. Same contract as `promiseChain`: the producer offers while `offer`
 * returns true and, when it returns false, waits for `onFree`.
 */
export function pQueuePerKey<T, K>(
  key: (m: T) => K,
  handle: (m: T) => Promise<unknown>,
  done: (m: T) => void,
  onFree: () => void,
  maxInFlight = 256,
): { offer(m: T): boolean; readonly inFlight: number; stop(): void } {
  /** Each key's queue and its unfinished messages (p-queue counts a task as running until after it resolves). */
  const queues = new Map<K, { queue: PQueue; unfinished: number }>();
  let inFlight = 0;
  let stopped = false;
  return {
    offer(m) {
      if (inFlight >= maxInFlight) return false;
      inFlight++;
      const k = key(m);
      let entry = queues.get(k);
      if (entry === undefined) {
        entry = { queue: new PQueue({ concurrency: 1 }), unfinished: 0 };
        queues.set(k, entry);
      }
      entry.unfinished++;
      const own = entry;
      void own.queue
        .add(async () => {
          if (stopped) return;
          await handle(m);
          if (!stopped) done(m);
        })
        .then(() => {
          inFlight--;
          if (--own.unfinished === 0) queues.delete(k);
          if (!stopped) onFree();
        });
      return true;
    },
    get inFlight() {
      return inFlight;
    },
    stop() {
      stopped = true;
    },
  };
}
