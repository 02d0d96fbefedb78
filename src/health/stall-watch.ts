import { UNDATED, UnfinishedDates } from '../internal/unfinished-dates';

/** The unfinished message that has gone longest without progress, and for how long. */
export interface Stalest {
  readonly message: unknown;
  readonly forMs: number;
}

/**
 * Remembers, from one health check to the next, since when each unfinished message of a dispatcher has
 * been seen (`UnfinishedDates`): the dispatcher itself records nothing per message. A message counts
 * from the first check that saw it, or from its last failed attempt when later (a retry is progress).
 */
export class StallWatch {
  readonly #dates = new UnfinishedDates();

  /** The stalest of `unfinished` now; null when nothing is unfinished. */
  stalest(
    unfinished: readonly unknown[],
    now: number,
    lastFailureOf: (message: unknown) => number | undefined,
  ): Stalest | null {
    let stalest: Stalest | null = null;
    this.#dates.read(unfinished, now, (message, since) => {
      const seen = since === UNDATED ? (this.#dates.firstReading ?? now) : since;
      const forMs = now - Math.max(seen, lastFailureOf(message) ?? seen);
      if (stalest === null || forMs > stalest.forMs) stalest = { message, forMs };
    });
    return stalest;
  }
}
