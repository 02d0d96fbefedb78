import type { KeyRecord } from '../dispatch/key-table';
import type { HandlerSetup } from '../dispatch/lanes';
import type { Dispatcher, Router } from '../dispatch/router';
import type { MessageWait } from '../internal/message-wait';
import { textOf } from '../internal/text-of';
import { wrongAnswer } from '../internal/wrong-answer';
import { isKeyFailure } from '../key-failure';
import type { TransferItem } from './protocol';
import type { ThreadHandler } from './thread-handler';
import type { KeyPlacement, PostedMessage, ThreadClient, ThreadLanes } from './thread-lanes';
import { type RetriesOwner, ThreadRetries } from './thread-retries';
import { TicketBoard } from './tickets';

/** A key's placement on a thread, as the router keeps it in the key's record. */
interface Placed<K> extends KeyPlacement {
  readonly record: KeyRecord<unknown, K>;
}

/**
 * Routing on thread lanes: each key is pinned to a thread while it has unfinished messages, and its
 * messages are posted there, where the key's mailbox runs (the same mailbox engine as on event-loop
 * lanes). Messages not yet started can be withdrawn at once through their tickets (see protocol.ts).
 * With a failure policy, a message whose run failed stays held in its thread while the policy, here,
 * retries it or gives up (see `ThreadRetries`).
 */
export class ThreadRouter<T, K, R> implements Router<T, K>, ThreadClient, RetriesOwner<T, K, R> {
  channel = 0;
  readonly tickets: TicketBoard;
  /** The failure policy's side on this thread; null without a policy. */
  private readonly retries: ThreadRetries<T, K, R> | null;
  /** Source of mailbox ids: a key that comes back after draining gets a fresh mailbox. */
  private lastMailboxId = 0;
  private closed = false;

  readonly handler: ThreadHandler<unknown, unknown>;
  readonly throughput: number;
  readonly waitOf: ((message: unknown) => MessageWait | undefined) | undefined;

  constructor(
    private readonly dispatcher: Dispatcher<T, K, R>,
    private readonly threads: ThreadLanes,
    work: HandlerSetup<T, K, R>,
  ) {
    // The threads run `work.threadHandler` (the options matched it to these lanes), never `work.handle`.
    this.handler = work.threadHandler as ThreadHandler<unknown, unknown>;
    this.throughput = work.throughput;
    const observer = work.observer;
    this.waitOf = observer && ((message) => observer.waited(message as T));
    const policy = work.policy;
    this.tickets = new TicketBoard((page) => this.threads.sharePage(this, page));
    this.retries = policy === undefined ? null : new ThreadRetries(policy, this);
  }

  /** With a failure policy, a failed run stays held in its thread for the policy. */
  get holdsFailures(): boolean {
    return this.retries !== null;
  }

  open(): void {
    this.threads.attach(this);
  }

  route(record: KeyRecord<unknown, K>, message: T): void {
    const key = record.key;
    if (this.retries !== null && isKeyFailure(key)) {
      // No thread can run it: the policy sends it to the dead letter here.
      this.unposted(record, message, undefined);
      return;
    }
    let transfers: readonly TransferItem[] | undefined;
    const transfer = this.handler.transfer;
    if (transfer !== undefined) {
      try {
        const list = transferList(transfer(message), key);
        // Nothing listed, nothing moved: the message can run again if its thread dies.
        if (list !== undefined && list !== null && list.length > 0) transfers = list;
      } catch (err) {
        this.unposted(record, message, err);
        return;
      }
    }
    let placement = record.placement as Placed<K> | null;
    if (placement === null) {
      const slot = this.threads.pickThread();
      slot.pinned++;
      placement = { slot, mailboxId: ++this.lastMailboxId, unfinished: 0, record };
      record.placement = placement;
    }
    placement.unfinished++;
    this.threads.post(this, placement, key, message, transfers);
  }

  /** A message no thread will run fails with `error`: with a policy, the policy deals with it here. */
  private unposted(record: KeyRecord<unknown, K>, message: T, error: unknown): void {
    if (this.retries !== null) this.retries.unposted(record.key, message, error);
    else this.dispatcher.failed(message, record, error);
  }

  discard(matches: (message: T) => boolean): T[] {
    const withdrawn = this.threads.withdraw(this, matches as (message: unknown) => boolean);
    for (const posted of withdrawn) {
      this.unplace(posted);
      this.dispatcher.withdrawn(recordOf<K>(posted), 1);
    }
    return withdrawn.map((posted) => posted.message as T);
  }

  unfinished(): T[] {
    const messages = this.threads.postedBy(this).map((posted) => posted.message as T);
    if (this.retries !== null) messages.push(...this.retries.outsideThreads());
    return messages;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.retries?.cancel();
    this.threads.detach(this);
    for (const { placement } of this.dispatcher.keys.live())
      if (placement !== null) (placement as KeyPlacement).slot.pinned--;
  }

  // ThreadClient: what the executor reports.
  emit(value: unknown): void {
    if (!this.closed) this.dispatcher.emit(value as R);
  }

  done(posted: PostedMessage): void {
    if (!this.closed) this.report(recordOf<K>(posted), posted.message as T, posted, false, undefined);
  }

  failed(posted: PostedMessage, error: unknown): void {
    if (this.closed) return;
    if (this.retries !== null) {
      // It failed without a thread to hold it (it could not be posted, or its thread is gone for good).
      this.retries.gone(posted, error);
      return;
    }
    this.report(recordOf<K>(posted), posted.message as T, posted, true, error);
  }

  ranHeld(posted: PostedMessage, failed: boolean, error?: unknown): void {
    if (!this.closed) this.retries?.ran(posted, failed, error);
  }

  // RetriesOwner: what the policy's side asks for.
  retry(posted: PostedMessage, item: number): void {
    if (!this.closed) this.threads.retry(posted, item);
  }

  decided(posted: PostedMessage | null, message: T, key: K, failed: boolean, error: unknown): void {
    if (this.closed) return;
    // A message never posted (its key selector failed) has its record under its `KeyFailure` key.
    const record = posted === null ? this.dispatcher.keys.take(key) : recordOf<K>(posted);
    if (posted !== null) this.threads.release(posted);
    this.report(record, message, posted, failed, error);
  }

  /**
   * Reports a message's outcome; then its key lets go of its thread with its last message (one of its
   * parked messages the report let in keeps it), and its record is filed if it holds nothing more.
   */
  private report(
    record: KeyRecord<unknown, K>,
    message: T,
    posted: PostedMessage | null,
    failed: boolean,
    error: unknown,
  ): void {
    if (failed) this.dispatcher.failed(message, record, error);
    else this.dispatcher.done(message, record);
    if (this.closed) return;
    if (posted !== null) this.unplace(posted);
    this.dispatcher.keys.letGoIfIdle(record);
  }

  terminate(error: unknown): unknown[] {
    return this.dispatcher.terminate(error);
  }

  /** One message of the key left: the key lets go of its thread with its last one. */
  private unplace(posted: PostedMessage): void {
    const placement = posted.placement;
    if (--placement.unfinished === 0) {
      recordOf<K>(posted).placement = null;
      placement.slot.pinned--;
    }
  }
}

/** The key record of a posted message (its placement holds it). */
function recordOf<K>(posted: PostedMessage): KeyRecord<unknown, K> {
  return (posted.placement as Placed<K>).record;
}

/**
 * What `transfer` returned, which must be an array (or nothing): anything else throws, failing the
 * message as a throwing `transfer` does. An async `transfer`'s Promise would be read as nothing listed.
 */
function transferList(list: unknown, key: unknown): readonly TransferItem[] | undefined | null {
  if (list === undefined || list === null || Array.isArray(list)) return list;
  throw wrongAnswer('threadHandler: `transfer`', list, `for key ${textOf(key)}`, 'an array');
}
