/**
 * Where a dispatcher's admitted messages go, and how they come back: one implementation per lane kind
 * (event-loop lanes, thread lanes). The dispatcher core knows nothing about lanes or threads; every
 * question about messages it has handed over (what is queued, what a key holds) is asked of its router.
 */
/** A key and its unfinished messages. */
export interface KeyBacklog {
  key: unknown;
  backlog: number;
}

/** The `n` of `backlogs` with the most unfinished messages, largest first. */
export function hottest<B extends KeyBacklog>(backlogs: B[], n: number): B[] {
  return backlogs.sort((a, b) => b.backlog - a.backlog).slice(0, n);
}

/**
 * The unfinished messages of `key` among a router's `records`, what it keeps per key (0 when it has
 * none): every `backlogOf`.
 */
export function backlogIn<K>(records: ReadonlyMap<K, { unfinished: number }>, key: K): number {
  return records.get(key)?.unfinished ?? 0;
}

/**
 * The `n` keys of a router's `records` with the most unfinished messages, largest first: every
 * `hotKeys`. A record with none (a pooled mailbox) is no hot key.
 */
export function hotKeysIn<K>(records: ReadonlyMap<K, { unfinished: number }>, n: number): KeyBacklog[] {
  const backlogs: KeyBacklog[] = [];
  for (const [key, { unfinished }] of records)
    if (unfinished > 0) backlogs.push({ key, backlog: unfinished });
  return hottest(backlogs, n);
}

export interface Router<T, K> {
  /** Starts routing; throws when the executor cannot take a dispatcher (closed). */
  open(): void;
  /**
   * Hands over an admitted message; its outcome comes back through the dispatcher's `Routed`. Returns
   * false, taking nothing, when `key` already holds `maxPerKey` unfinished messages. `startNow`: the
   * dispatcher admits it in a refill after a handler ended, with none of the user's code on the stack,
   * so a new key's mailbox may start it right away, in the running lane's turn (see `Mailbox.post`).
   */
  route(key: K, message: T, startNow: boolean): boolean;
  /**
   * Takes back the messages `matches` accepts that have not started, and returns them: they never
   * start and are never settled (left for redelivery).
   */
  discard(matches: (message: T) => boolean): T[];
  /** Messages handed over and not finished: running (or waiting out a retry) and queued. */
  unfinished(): T[];
  /** Unfinished messages of `key` (0 when it has none). */
  backlogOf(key: K): number;
  /** The `n` keys with the most unfinished messages, largest first. */
  hotKeys(n: number): KeyBacklog[];
  /** Keys with unfinished messages (one mailbox each). */
  readonly liveMailboxes: number;
  /**
   * Cancels running handlers and withdraws every message not started. Idempotent. A handler teardown
   * that throws does not stop it; the first such error is thrown once everything is closed.
   */
  close(): void;
}

/** What a router reports to its dispatcher. */
export interface Routed<T, K, R> {
  /** A handler emitted `value`. */
  emit(value: R): void;
  /** `message`'s handler completed (its key has one unfinished message less). */
  done(message: T, key: K): void;
  /** `message`'s handler (or its routing) failed. */
  failed(message: T, key: K, error: unknown): void;
  /** The executor closed (or another fault hit the whole dispatcher): error the output; returns what stopping threw. */
  terminate(error: unknown): unknown[];
}
