/** The date of a message the first reading found: unknown, at or before that reading. */
export const UNDATED = Number.NEGATIVE_INFINITY;

/**
 * Dates unfinished messages by the first reading that finds them, so that no message carries a
 * timestamp and the dispatcher reads no clock per message: a date is exact to the time between two
 * readings. Messages are told apart by identity; equal values (two `'a'` strings) by count, the oldest
 * finishing first, as a key's messages do. What the first reading finds is `UNDATED`: it may be older.
 * The metrics' oldest unfinished message and the health check's stalest one both read it.
 */
export class UnfinishedDates {
  /** When each unfinished message was first found, oldest first for equal values. */
  #seen = new Map<unknown, number[]>();
  #firstReading: number | null = null;

  /** When the first reading since the last `reset` was made; null before it. */
  get firstReading(): number | null {
    return this.#firstReading;
  }

  /** Forgets every message: a new dispatcher run starts. */
  reset(): void {
    this.#seen = new Map();
    this.#firstReading = null;
  }

  /**
   * Reads `messages` (what is unfinished now) at `now`, calling `each` with every message and its date
   * (`UNDATED` for what the first reading found). Finished messages are forgotten.
   */
  read(messages: readonly unknown[], now: number, each: (message: unknown, since: number) => void): void {
    const found = this.#firstReading === null ? UNDATED : now;
    this.#firstReading ??= now;
    const counts = new Map<unknown, number>();
    for (const message of messages) counts.set(message, (counts.get(message) ?? 0) + 1);
    const seen = new Map<unknown, number[]>();
    for (const [message, count] of counts) {
      const before = this.#seen.get(message) ?? [];
      // Of equal messages, the oldest finished first: the newest `count` are the ones left.
      const dates = before.length === count ? before : before.slice(Math.max(0, before.length - count));
      while (dates.length < count) dates.push(found);
      seen.set(message, dates);
      for (const since of dates) each(message, since);
    }
    this.#seen = seen;
  }
}
