import type { TransferListItem, Worker } from 'node:worker_threads';
import { FLUSH_AT, type TransferItem } from './protocol';
import { addToRun, writeRun } from './wire';

/**
 * One thread lane as the main thread sees it: the worker now running it (replaced when it dies), the
 * batch of operations waiting to be posted to it, and its load for placing new keys.
 */
export class ThreadSlot {
  /** The live worker, or null before the first spawn, while down, and after stopping. */
  worker: Worker | null = null;
  /** Messages posted to this lane and not finished, over all dispatchers (its load; refs the worker while > 0). */
  unfinished = 0;
  /** Keys pinned to this lane now, over all dispatchers. */
  pinned = 0;
  /** Dispatchers (channels) the current worker has been told about. */
  readonly opened = new Set<number>();
  /** True while the lane is dead and waits for the respawn rate limit to allow a new thread. */
  down = false;
  /** When this lane's thread was replaced within the last minute, oldest first (its respawn rate limit). */
  respawnTimes: number[] = [];
  /** The current thread's watch memory (see `ThreadInit.watch`), or null while none runs. */
  watchMemory: Int32Array | null = null;
  /** Records for the worker, posted as one batch (see wire.ts). */
  private ops: unknown[] = [];
  private transfers: TransferItem[] = [];
  private flushQueued = false;
  /** The channel of the RUN record that ends `ops` (its messages can be appended), or -1. */
  private runChannel = -1;
  /** Where that RUN record's message count is in `ops`. */
  private runCountAt = 0;

  constructor(
    /** Position of the lane in its executor, from 0. */
    readonly index: number,
    /** Called with a batch that could not be cloned, to post its records one by one. */
    private readonly onUncloneable: (slot: ThreadSlot, ops: unknown[]) => void,
  ) {}

  get idle(): boolean {
    return this.unfinished === 0 && !this.down;
  }

  /** Appends one record (other than a RUN's message) with its writer, to be posted soon. */
  write<F extends unknown[]>(write: (batch: unknown[], ...fields: F) => void, ...fields: F): void {
    write(this.ops, ...fields);
    this.runChannel = -1;
    this.scheduleFlush();
  }

  /** Appends one message to run (the hot path): to the RUN record at the end when it is the same channel's. */
  pushRun(
    channel: number,
    mailbox: number,
    id: number,
    ticket: number,
    key: unknown,
    message: unknown,
  ): void {
    const ops = this.ops;
    if (this.runChannel !== channel) {
      this.runChannel = channel;
      this.runCountAt = writeRun(ops, channel);
    }
    addToRun(ops, this.runCountAt, mailbox, id, ticket, key, message);
    this.scheduleFlush();
  }

  /** What the batch waiting to be posted transfers. */
  get pendingTransfers(): readonly TransferItem[] {
    return this.transfers;
  }

  addTransfers(list: readonly TransferItem[]): void {
    for (const item of list) this.transfers.push(item);
  }

  /** Counts one more unfinished message; the worker keeps the process alive while it holds any. */
  hold(): void {
    if (this.unfinished++ === 0) this.worker?.ref();
  }

  letGo(n = 1): void {
    this.unfinished -= n;
    if (this.unfinished === 0) this.worker?.unref();
  }

  /** Forgets records not yet posted (their worker is gone; the executor re-posts what must run). */
  dropPending(): void {
    this.ops = [];
    this.transfers = [];
    this.runChannel = -1;
  }

  private scheduleFlush(): void {
    if (this.ops.length >= FLUSH_AT) this.flush();
    else if (!this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(() => this.flush());
    }
  }

  flush(): void {
    this.flushQueued = false;
    if (this.ops.length === 0) return;
    const ops = this.ops;
    const transfers = this.transfers;
    this.ops = [];
    this.transfers = [];
    this.runChannel = -1;
    const worker = this.worker;
    if (worker === null) return;
    try {
      worker.postMessage(ops, transfers as TransferListItem[]);
    } catch {
      this.onUncloneable(this, ops);
    }
  }
}
