import PQueue from 'p-queue';
import type { Offered } from './promise-chain';

/**
 * p-queue per key, as an application would write it: a Map of key → `PQueue({ concurrency: 1 })`, a
 * key's queue forgotten when its last message finishes, and the same bound on unfinished messages and
 * producer as the promise chain.
 */
export function pQueuePerKey<T, K>(
  key: (m: T) => K,
  handle: (m: T) => Promise<unknown>,
  done: (m: T) => void,
  maxInFlight = 256,
): Offered<T> {
  const queues = new Map<K, { queue: PQueue; unfinished: number }>();
  let inFlight = 0;
  let wake: (() => void) | undefined;
  return {
    offer(m) {
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
        .add(() => handle(m))
        .then(() => {
          inFlight--;
          if (--own.unfinished === 0) queues.delete(k);
          done(m);
          const producer = wake;
          wake = undefined;
          producer?.();
        });
    },
    get full() {
      return inFlight >= maxInFlight;
    },
    free: () => new Promise<void>((resolve) => (wake = resolve)),
  };
}
