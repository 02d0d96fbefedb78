/**
 * The wire protocol between a `ThreadExecutor` (main thread) and its worker threads. Both sides import
 * this file; it imports nothing at run time, so the thread side never loads main-thread code.
 *
 * Both directions are batched: each side appends operations to one flat array per thread and posts it
 * later (the main thread once per microtask, a thread when it runs out of work or every few
 * milliseconds; either sooner when it grows past `FLUSH_AT` entries), so the fixed cost of a
 * `postMessage` is shared by every message in the batch. A batch is a flat array of operations, each an
 * op code followed by a fixed number of fields; flat arrays of primitives are the cheapest shape for
 * structured clone.
 *
 * Main → thread (`ToThread`):
 *   OPEN  channel, moduleUrl, exportName, throughput   a dispatcher's first message to this thread
 *   RUN   channel, count, then `count` times:          messages of one dispatcher, each into a mailbox
 *           mailbox, message id, key, message          (per-dispatcher mailbox id)
 *   CLOSE channel                                      the dispatcher ended: cancel and forget it
 *   STOP                                               the executor closes: cancel everything and exit
 *
 * Consecutive messages of one dispatcher share one RUN header: cloning costs per entry, and the op code
 * and channel repeated for every message made the main thread's posts ~1.8× as costly.
 *
 * Thread → main (`ToMain`):
 *   NEXT  channel, value                  a handler emitted a value
 *   DONE  message id                      a handler completed
 *   FAIL  message id, error               a handler threw or errored (or could not be loaded)
 *
 * Ordering: one port per thread keeps each direction in order, so a message's values arrive before its
 * DONE, and the RUN operations of one mailbox arrive in admission order.
 */

import type { TransferListItem } from 'node:worker_threads';

export enum ToThread {
  Open = 0,
  Run = 1,
  Close = 2,
  Stop = 3,
}

export enum ToMain {
  Next = 0,
  Done = 1,
  Fail = 2,
}

/** Fields after each op code, so a reader can skip or replay operations. */
export const OPEN_FIELDS = 4;
/** Fields after RUN's op code before its messages (channel, count). */
export const RUN_HEADER_FIELDS = 2;
/** Fields of each message of a RUN. */
export const RUN_MESSAGE_FIELDS = 4;
export const CLOSE_FIELDS = 1;
export const STOP_FIELDS = 0;

/** A batch is posted at once when it reaches this many array entries, so one batch never grows without bound. */
export const FLUSH_AT = 8192;

/** What the main thread passes as `workerData`. */
export interface ThreadInit {
  /** Position of the thread in its executor, from 0 (a handler sees it as `context.laneIndex`). */
  readonly index: number;
}

/**
 * Set this property on a value a thread handler emits (or on a message, see `threadHandler`'s
 * `transfer` option) to list `ArrayBuffer`s and ports that should be moved rather than copied across
 * the thread boundary. The symbol is registered, so plain JS handler modules can use
 * `Symbol.for('keyed-dispatch.transfer')` without importing anything. Symbol-keyed properties are not
 * cloned, so the receiver never sees it.
 */
export const TRANSFER: unique symbol = Symbol.for('keyed-dispatch.transfer') as never;

/** Marks `value` so that the buffers and ports in `list` move to the other thread instead of being copied. */
export function transfer<V extends object>(value: V, list: readonly TransferListItem[]): V {
  (value as { [TRANSFER]?: readonly TransferListItem[] })[TRANSFER] = list;
  return value;
}

/** The transfer list a value was marked with, if any. */
export function transferListOf(value: unknown): readonly TransferListItem[] | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  return (value as { [TRANSFER]?: readonly TransferListItem[] })[TRANSFER];
}
