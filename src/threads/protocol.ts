/**
 * The wire protocol between a `ThreadExecutor` (main thread) and its worker threads. Both sides import
 * this file and wire.ts; they import nothing at run time, so the thread side never loads main-thread code.
 *
 * Both directions are batched: each side appends records to one flat array per thread and posts it
 * later (the main thread once per microtask, a thread when it runs out of work or every few
 * milliseconds; either sooner when it grows past `FLUSH_AT` entries), so the fixed cost of a
 * `postMessage` is shared by every message in the batch. A batch is a flat array of records, each an
 * op code followed by a fixed number of fields; flat arrays of primitives are the cheapest shape for
 * structured clone.
 *
 * The records themselves (what each carries, in which order) are written and read in wire.ts only.
 *
 * Tickets: a message posted to a thread is not the thread's to start until it claims it. Each posted
 * message holds a ticket, a slot in shared memory (pages of `TICKET_PAGE` Int32 slots per dispatcher,
 * `SharedArrayBuffer`s both sides see) set to the message's tag while it waits. The thread claims it with
 * a compare-and-swap just before the handler starts; the main thread withdraws it with the same swap
 * (discard, unsubscribe, close). Whoever swaps first wins, so a withdrawn message never starts however
 * many messages the thread still has queued, and a discard knows at once which messages never started.
 * A ticket is reused for a later message under a new tag, so a stale record in a thread never matches.
 *
 * Transfer lists: a message with one (`threadHandler`'s `transfer`) is announced to its thread with its
 * ticket and key but without its data, which stays on the main thread until the thread claims it and asks
 * for it: only then does its list move. So a thread that dies takes with it the data of the messages that
 * were running on it only; a message that was waiting there is sent to the replacement with its data.
 * Messages without a list are posted with their data at once (no round trip).
 *
 * Ordering: one port per thread keeps each direction in order, so a message's values arrive before its
 * DONE, and the RUN records of one mailbox arrive in admission order.
 *
 * Held messages: a dispatcher with a failure policy opens its channel with "holds failures". A message
 * of it whose run fails is reported (FAILED) and held: its handler does not end, so its key's next message
 * waits in the mailbox, while the policy decides on the main thread. RETRY runs it again (item -1), or
 * runs item `item` of it alone as a batch of one (a failed batch taken apart); each run's end is
 * reported (DONE or FAILED) and the message stays held, until RELEASE ends its handler. A held message
 * sent again to a thread that replaced a dead one comes in a RUN with the ticket `HELD_TICKET`: it
 * starts held, without running, and waits for RETRY or RELEASE.
 */

/** The ticket of a held message sent again: it starts held (nothing to claim: it had started). */
export const HELD_TICKET = -1;
/** RETRY's item to run the held message itself again. */
export const WHOLE = -1;

/** Tickets per shared page (a page is `TICKET_PAGE` Int32 slots): 2 ** `TICKET_PAGE_BITS`. */
const TICKET_PAGE_BITS = 10;
export const TICKET_PAGE = 1 << TICKET_PAGE_BITS;
/** A ticket's slot when its message has started in a thread (tags never take this value). */
const STARTED = 1;
/** A ticket's slot when the main thread withdrew its message. */
const WITHDRAWN = 2;

/** The value a waiting message's ticket holds: its id folded into 30 bits, with bit 30 set (never 0, 1 or 2). */
export function ticketTag(messageId: number): number {
  return (messageId & 0x3fffffff) | 0x40000000;
}

/** Sets `ticket` to wait for the message `messageId` (main thread, when posting it). */
export function issueTicket(pages: readonly Int32Array[], ticket: number, messageId: number): void {
  Atomics.store(pages[ticket >> TICKET_PAGE_BITS], ticket & (TICKET_PAGE - 1), ticketTag(messageId));
}

/** The thread's claim, just before the handler starts: false when the message was withdrawn. */
export function claimTicket(pages: readonly Int32Array[], ticket: number, messageId: number): boolean {
  const tag = ticketTag(messageId);
  return (
    Atomics.compareExchange(pages[ticket >> TICKET_PAGE_BITS], ticket & (TICKET_PAGE - 1), tag, STARTED) ===
    tag
  );
}

/** Whether a thread has started the message `ticket` is held for (read once that thread is gone). */
export function ticketStarted(pages: readonly Int32Array[], ticket: number): boolean {
  return Atomics.load(pages[ticket >> TICKET_PAGE_BITS], ticket & (TICKET_PAGE - 1)) === STARTED;
}

/** The main thread's withdrawal: true when the message had not started (and now never will). */
export function withdrawTicket(pages: readonly Int32Array[], ticket: number, messageId: number): boolean {
  const tag = ticketTag(messageId);
  return (
    Atomics.compareExchange(pages[ticket >> TICKET_PAGE_BITS], ticket & (TICKET_PAGE - 1), tag, WITHDRAWN) ===
    tag
  );
}

/** A batch is posted at once when it reaches this many array entries, so one batch never grows without bound. */
export const FLUSH_AT = 8192;

/** What the main thread passes as `workerData`. */
export interface ThreadInit {
  /** Position of the thread in its executor, from 0 (a handler sees it as `context.laneIndex`). */
  readonly index: number;
  /**
   * Memory the main thread reads to see a handler holding this thread (a blocked thread cannot report
   * itself): `RUNS_STARTED` counts handler calls begun, `RUNNING_MESSAGE` is the id of the message
   * whose handler is being called now, 0 between calls.
   */
  readonly watch: Int32Array;
}

/** In `ThreadInit.watch`: handler calls begun on the thread. */
export const RUNS_STARTED = 0;
/** In `ThreadInit.watch`: the message whose handler is being called now, 0 when none. */
export const RUNNING_MESSAGE = 1;
/** Int32 slots of `ThreadInit.watch`. */
export const WATCH_SLOTS = 2;

/**
 * What a transfer list may hold: what Node's `postMessage` moves instead of copying — an `ArrayBuffer` (a
 * typed array's `.buffer`, not the typed array), a `MessagePort`, a `FileHandle`, an `X509Certificate`
 * or a `Blob`. Described by shape rather than taken from `node:worker_threads`, so that the package's
 * types compile without `@types/node`; anything else fails, at run time, the message that listed it.
 */
export type TransferItem =
  | ArrayBuffer
  | {
      /** A `MessagePort`: sends to the other end. */
      postMessage(value: unknown): void;
      /** A `MessagePort`: starts delivering messages. */
      start(): void;
      /** A `MessagePort`: closes it. */
      close(): void;
    }
  | {
      /** A `FileHandle`: its file descriptor. */
      readonly fd: number;
      /** A `FileHandle`: closes it. */
      close(): Promise<void>;
    }
  | {
      /** An `X509Certificate`: its SHA-256 fingerprint. */
      readonly fingerprint256: string;
    }
  | {
      /** A `Blob`: its size in bytes. */
      readonly size: number;
      /** A `Blob`: its MIME type. */
      readonly type: string;
      /** A `Blob`: its bytes. */
      arrayBuffer(): Promise<ArrayBuffer>;
    };

/**
 * Set this property on a value a thread handler emits (or on a message, see `threadHandler`'s
 * `transfer` option) to list `ArrayBuffer`s and ports that should be moved rather than copied across
 * the thread boundary. The symbol is registered, so plain JS handler modules can use
 * `Symbol.for('keyed-dispatch.transfer')` without importing anything. Symbol-keyed properties are not
 * cloned, so the receiver never sees it.
 */
export const TRANSFER: unique symbol = Symbol.for('keyed-dispatch.transfer') as never;

/** Marks `value` so that the buffers and ports in `list` move to the other thread instead of being copied. */
export function transfer<V extends object>(value: V, list: readonly TransferItem[]): V {
  (value as { [TRANSFER]?: readonly TransferItem[] })[TRANSFER] = list;
  return value;
}

/** The transfer list a value was marked with, if any. */
export function transferListOf(value: unknown): readonly TransferItem[] | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  return (value as { [TRANSFER]?: readonly TransferItem[] })[TRANSFER];
}

/**
 * Why `list` cannot go with its record, or null when it can: a buffer listed twice (in it, or in the
 * batch waiting to be posted, whose posting would detach it first) or already detached (transferred
 * before). Either would reach the other side as an empty buffer, or fail the whole batch.
 */
export function transferListMisuse(
  list: readonly TransferItem[],
  pending: readonly TransferItem[],
): string | null {
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    if (list.indexOf(item) !== i || pending.includes(item)) {
      return 'lists a buffer twice (in its own list, or in another one waiting to be posted); each buffer can be transferred once';
    }
    if (item instanceof ArrayBuffer && isDetached(item)) {
      return 'lists a detached ArrayBuffer (transferred already), which would arrive empty';
    }
  }
  return null;
}

/**
 * Whether what `list` moved to a thread is gone with it: a buffer now detached here, or an item whose
 * move cannot be told (a port, a handle), which is taken as gone.
 */
export function transfersLost(list: readonly TransferItem[]): boolean {
  return list.some((item) => !(item instanceof ArrayBuffer) || isDetached(item));
}

function isDetached(buffer: ArrayBuffer): boolean {
  const detached = (buffer as { detached?: boolean }).detached;
  if (detached !== undefined) return detached;
  // Without the `detached` property (Node 20), only an empty buffer may be a detached one: try to clone it.
  if (buffer.byteLength !== 0) return false;
  try {
    structuredClone(buffer);
    return false;
  } catch {
    return true;
  }
}
