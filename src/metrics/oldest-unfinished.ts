import { UNDATED, UnfinishedDates } from '../internal/unfinished-dates';

/** The oldest unfinished message of a dispatcher, in `MetricsSnapshot.oldestUnfinished`. */
export interface OldestUnfinished {
  /** How long it has been unfinished, in ms: since the first reading that found it. */
  readonly ageMs: number;
  /**
   * True when it was already unfinished at the first reading of these metrics: it may be older than
   * `ageMs` (nothing dates a message before a reading finds it).
   */
  readonly atLeast: boolean;
}

/** The oldest unfinished message at each reading, dated by `UnfinishedDates`. */
export class OldestUnfinishedTracker {
  readonly #dates = new UnfinishedDates();

  /** Forgets every message: a new dispatcher run starts. */
  reset(): void {
    this.#dates.reset();
  }

  /** The oldest of `messages` (what is unfinished now), or null when there is none. */
  read(messages: readonly unknown[], now: number): OldestUnfinished | null {
    let oldest = Number.POSITIVE_INFINITY;
    this.#dates.read(messages, now, (_, since) => {
      if (since < oldest) oldest = since;
    });
    if (oldest === Number.POSITIVE_INFINITY) return null;
    if (oldest === UNDATED) return { ageMs: now - (this.#dates.firstReading ?? now), atLeast: true };
    return { ageMs: now - oldest, atLeast: false };
  }
}
