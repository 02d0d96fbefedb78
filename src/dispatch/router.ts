import type { KeyRecord, KeyTable } from './key-table';

/**
 * Where a dispatcher's admitted messages go, and how they come back: one implementation per lane kind
 * (event-loop lanes, thread lanes), and per-key batches in front of either. What a key holds is in the
 * dispatcher's key table, whose records the router is handed; the router keeps a key's placement there.
 */
export interface Router<T, K> {
  /** Starts routing; throws when the executor cannot take a dispatcher (closed). */
  open(): void;
  /**
   * Hands over an admitted message of `record`'s key; its outcome comes back through the dispatcher's
   * `Dispatcher`. Whether it starts at once is the lanes' decision (see `LaneLoop.beginWithin`).
   */
  route(record: KeyRecord<unknown, K>, message: T): void;
  /**
   * Takes back the messages `matches` accepts that have not started, and returns them, reporting each
   * key's through `Dispatcher.withdrawn`: they never start and are never settled (left for redelivery).
   */
  discard(matches: (message: T) => boolean): T[];
  /** Messages handed over and not finished: running (or waiting out a retry) and queued. */
  unfinished(): T[];
  /**
   * Cancels running handlers and withdraws every message not started. Idempotent. A handler teardown
   * that throws does not stop it; the first such error is thrown once everything is closed.
   */
  close(): void;
}

/** What a router reports to its dispatcher. */
export interface Dispatcher<T, K, R> {
  /** The dispatcher's keys, where the router keeps each key's placement. */
  readonly keys: KeyTable<unknown, K>;
  /** A handler emitted `value`. */
  emit(value: R): void;
  /**
   * `message`'s handler completed (its key has one unfinished message less). The key's placement is
   * still held: the router calls `keys.letGoIfIdle` once it lets go of it.
   */
  done(message: T, record: KeyRecord<unknown, K>): void;
  /** `message`'s handler (or its routing) failed. */
  failed(message: T, record: KeyRecord<unknown, K>, error: unknown): void;
  /** `count` messages of the key were taken back by `Router.discard` before they started. */
  withdrawn(record: KeyRecord<unknown, K>, count: number): void;
  /** The executor closed (or another fault hit the whole dispatcher): error the output; returns what stopping threw. */
  terminate(error: unknown): unknown[];
}
