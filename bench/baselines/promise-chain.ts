/**
 * The per-key promise chain users write, and nothing more: a Map of each key's last promise (its tail).
 * A message whose key has no tail starts at once, else it starts in `tail.then(() => handle(m))`; the
 * tail is deleted when its key's last message ends. At most `maxInFlight` messages are unfinished: the
 * producer checks `full` and awaits `free()` before offering the next one.
 */
export function promiseChain<T, K>(
  key: (m: T) => K,
  handle: (m: T) => Promise<unknown>,
  done: (m: T) => void,
  maxInFlight = 256,
): Offered<T> {
  const tails = new Map<K, Promise<void>>();
  let inFlight = 0;
  let wake: (() => void) | undefined;
  return {
    offer(m) {
      inFlight++;
      const k = key(m);
      const tail = tails.get(k);
      const p: Promise<void> = (tail === undefined ? handle(m) : tail.then(() => handle(m))).then(() => {
        inFlight--;
        if (tails.get(k) === p) tails.delete(k);
        done(m);
        if (wake !== undefined) {
          const producer = wake;
          wake = undefined;
          producer();
        }
      });
      tails.set(k, p);
    },
    get full() {
      return inFlight >= maxInFlight;
    },
    free: () => new Promise<void>((resolve) => (wake = resolve)),
  };
}

/** What a producer offers messages to: a bounded per-key baseline. */
export interface Offered<T> {
  offer(m: T): void;
  /** True while `maxInFlight` messages are unfinished. */
  readonly full: boolean;
  /** Resolves when a message finishes. */
  free(): Promise<void>;
}

/** The producer: offers `input` in order, awaiting a free slot whenever the baseline is full. */
export async function produce<T>(input: readonly T[], into: Offered<T>): Promise<void> {
  for (const m of input) {
    if (into.full) await into.free();
    into.offer(m);
  }
}
