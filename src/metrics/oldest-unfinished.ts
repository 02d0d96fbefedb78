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

/** The date of a message the first reading found: unknown, at or before that reading. */
const UNDATED = Number.NEGATIVE_INFINITY;

/**
 * Dates unfinished messages by the first reading that finds them, so that no message carries a
 * timestamp and the dispatcher reads no clock per message: an age is exact to the time between two
 * readings. Messages are told apart by identity; equal values (two `'a'` strings) by count, the oldest
 * finishing first, as a key's messages do.
 */
export class OldestUnfinishedTracker {
  /**
   * When each unfinished message was first found, oldest first for equal values; `UNDATED` for those
   * the first reading found, which may be older.
   */
  #seen = new Map<unknown, number[]>();
  /** When the first reading was made, since the last `reset`; null before it. */
  #firstReading: number | null = null;

  /** Forgets every message: a new dispatcher run starts. */
  reset(): void {
    this.#seen = new Map();
    this.#firstReading = null;
  }

  /** The oldest of `messages` (what is unfinished now), or null when there is none. */
  read(messages: readonly unknown[], now: number): OldestUnfinished | null {
    const first = this.#firstReading ?? now;
    const found = this.#firstReading === null ? UNDATED : now;
    this.#firstReading = first;
    const counts = new Map<unknown, number>();
    for (const message of messages) counts.set(message, (counts.get(message) ?? 0) + 1);
    const seen = new Map<unknown, number[]>();
    let oldest = Number.POSITIVE_INFINITY;
    for (const [message, count] of counts) {
      const before = this.#seen.get(message) ?? [];
      // Of equal messages, the oldest finished first: the newest `count` are the ones left.
      const times = before.length === count ? before : before.slice(Math.max(0, before.length - count));
      while (times.length < count) times.push(found);
      seen.set(message, times);
      if (times[0] < oldest) oldest = times[0];
    }
    this.#seen = seen;
    if (oldest === Number.POSITIVE_INFINITY) return null;
    if (oldest === UNDATED) return { ageMs: now - first, atLeast: true };
    return { ageMs: now - oldest, atLeast: false };
  }
}
