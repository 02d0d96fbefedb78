/**
 * The hand-written per-key promise chain, as an application would write it: a Map of each key's last
 * promise (its tail) and a global bound on unfinished messages. A message whose key has no tail starts at
 * once, else it runs after the tail; the tail is forgotten when the key's last message finishes. The
 * producer offers while `offer` returns true and, when it returns false, waits for `onFree`.
 */
export function promiseChain<T, K>(
  key: (m: T) => K,
  handle: (m: T) => Promise<unknown>,
  done: (m: T) => void,
  onFree: () => void,
  maxInFlight = 256,
): { offer(m: T): boolean; readonly inFlight: number; stop(): void } {
  const tails = new Map<K, Promise<void>>();
  let inFlight = 0;
  let stopped = false;
  const run = async (m: T): Promise<void> => {
    if (stopped) return;
    await handle(m);
    if (!stopped) done(m);
  };
  return {
    offer(m) {
      if (inFlight >= maxInFlight) return false;
      inFlight++;
      const k = key(m);
      const prev = tails.get(k);
      const tail: Promise<void> = (prev === undefined ? run(m) : prev.then(() => run(m))).then(() => {
        inFlight--;
        if (tails.get(k) === tail) tails.delete(k);
        if (!stopped) onFree();
      });
      tails.set(k, tail);
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
