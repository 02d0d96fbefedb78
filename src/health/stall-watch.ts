/** The unfinished message that has gone longest without progress, and for how long. */
export interface Stalest {
  readonly message: unknown;
  readonly forMs: number;
}

/**
 * Remembers, from one health check to the next, since when each unfinished message of a dispatcher has
 * been seen: the dispatcher itself records nothing per message. A message counts from the first check
 * that saw it, or from its last failed attempt when later (a retry is progress).
 */
export class StallWatch {
  #firstSeen = new Map<unknown, number>();

  /** The stalest of `unfinished` now; null when nothing is unfinished. */
  stalest(
    unfinished: readonly unknown[],
    now: number,
    lastFailureOf: (message: unknown) => number | undefined,
  ): Stalest | null {
    const seen = new Map<unknown, number>();
    let stalest: Stalest | null = null;
    for (const message of unfinished) {
      const first = this.#firstSeen.get(message) ?? now;
      seen.set(message, first);
      const forMs = now - Math.max(first, lastFailureOf(message) ?? first);
      if (stalest === null || forMs > stalest.forMs) stalest = { message, forMs };
    }
    // Only what is still unfinished is remembered: finished messages are forgotten here.
    this.#firstSeen = seen;
    return stalest;
  }
}
