import type { Routed, Router } from '../dispatch/router';
import { NoThreadLaneError } from './errors';
import type { ThreadHandler } from './handler';
import type { TransferItem } from './protocol';
import type { KeyPlacement, PostedMessage, ThreadClient, ThreadLanes } from './thread-lanes';
import { TicketBoard } from './tickets';

/**
 * Routing on thread lanes: each key is pinned to a thread while it has unfinished messages, and its
 * messages are posted there, where the key's mailbox runs (the same mailbox engine as on event-loop
 * lanes). Messages not yet started can be withdrawn at once through their tickets (see protocol.ts).
 */
export class ThreadRouter<T, K, R> implements Router<T, K>, ThreadClient {
  channel = 0;
  readonly tickets: TicketBoard;
  /** Keys with unfinished messages and the thread each is pinned to. */
  private readonly placements = new Map<K, KeyPlacement>();
  /** Source of mailbox ids: a key that comes back after draining gets a fresh mailbox. */
  private lastMailboxId = 0;
  private closed = false;

  constructor(
    private readonly dispatcher: Routed<T, K, R>,
    private readonly threads: ThreadLanes,
    readonly handler: ThreadHandler<unknown, unknown>,
    readonly throughput: number,
    /** Unfinished messages one key may hold here; the dispatcher parks the rest. */
    private readonly maxPerKey: number,
  ) {
    this.tickets = new TicketBoard((page) => this.threads.sharePage(this, page));
  }

  get liveMailboxes(): number {
    return this.placements.size;
  }

  open(): void {
    this.threads.attach(this);
  }

  route(key: K, message: T): boolean {
    let placement = this.placements.get(key);
    if (placement !== undefined && placement.unfinished >= this.maxPerKey) return false;
    let transfers: readonly TransferItem[] | undefined;
    const transfer = this.handler.transfer;
    if (transfer !== undefined) {
      try {
        const list = transfer(message);
        // Nothing listed, nothing moved: the message can run again if its thread dies.
        if (list !== undefined && list !== null && list.length > 0) transfers = list;
      } catch (err) {
        this.dispatcher.failed(message, key, err);
        return true;
      }
    }
    if (placement === undefined) {
      const slot = this.threads.pickThread();
      if (slot === null) {
        this.dispatcher.failed(message, key, new NoThreadLaneError());
        return true;
      }
      slot.pinned++;
      placement = { slot, mailboxId: ++this.lastMailboxId, unfinished: 0 };
      this.placements.set(key, placement);
    }
    placement.unfinished++;
    this.threads.post(this, placement, key, message, transfers);
    return true;
  }

  discard(matches: (message: T) => boolean): T[] {
    const withdrawn = this.threads.withdraw(this, matches as (message: unknown) => boolean);
    for (const posted of withdrawn) this.unplace(posted);
    return withdrawn.map((posted) => posted.message as T);
  }

  unfinished(): T[] {
    return this.threads.postedBy(this).map((posted) => posted.message as T);
  }

  backlogOf(key: K): number {
    return this.placements.get(key)?.unfinished ?? 0;
  }

  hotKeys(n: number): Array<{ key: unknown; backlog: number }> {
    const all: Array<{ key: unknown; backlog: number }> = [];
    for (const [key, placement] of this.placements) all.push({ key, backlog: placement.unfinished });
    return all.sort((a, b) => b.backlog - a.backlog).slice(0, n);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.threads.detach(this);
    for (const placement of this.placements.values()) placement.slot.pinned--;
    this.placements.clear();
  }

  // ThreadClient: what the executor reports.
  emit(value: unknown): void {
    if (!this.closed) this.dispatcher.emit(value as R);
  }

  finished(posted: PostedMessage, failed: boolean, error?: unknown): void {
    if (this.closed) return;
    this.unplace(posted);
    if (failed) this.dispatcher.failed(posted.message as T, posted.key as K, error);
    else this.dispatcher.done(posted.message as T, posted.key as K);
  }

  terminate(error: unknown): unknown[] {
    return this.dispatcher.terminate(error);
  }

  /** One message of the key left: the key lets go of its thread with its last one. */
  private unplace(posted: PostedMessage): void {
    const placement = posted.placement;
    if (--placement.unfinished === 0) {
      this.placements.delete(posted.key as K);
      placement.slot.pinned--;
    }
  }
}
