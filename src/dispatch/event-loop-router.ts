import type { ObservableInput } from 'rxjs';
import type { EventLoopLanes } from '../engine/event-loop-lanes';
import { type HandlerContext, Mailbox, type MailboxOwner, MailboxState } from '../engine/mailbox';
import type { HandlerTimer } from '../stats';
import type { KeyRecord } from './key-table';
import type { HandlerSetup } from './lanes';
import type { Dispatcher, Router } from './router';

/**
 * Routing on event-loop lanes: a mailbox per key with unfinished messages, pinned to a lane of the
 * executor when it opens, run by the lane loop of this thread. A key's mailbox is its placement in the
 * dispatcher's key table, kept there once drained for the record's next key; the router places them on
 * lanes and runs the user's handler for them.
 *
 * Where a new mailbox goes is the lane set's choice (`EventLoopLanes.place`).
 */
export class EventLoopRouter<T, K, R> implements Router<T, K>, MailboxOwner<T, K, R> {
  /** Times one handler in `timer.every` when metrics ask for it; null otherwise, so untimed runs pay one field check. */
  private readonly timer: HandlerTimer | null;
  /** Handlers left to start before the next timed one. */
  private untilTimed: number;
  /** The mailbox whose running handler is being timed (one at a time), and since when. */
  private timed: Mailbox<T, K, R> | null = null;
  private timedSince = 0;

  /** The user's handler (inside its failure policy), held here so the per-message call skips `work`. */
  private readonly userHandler: (message: T, context: HandlerContext<K>) => ObservableInput<R>;
  readonly throughput: number;
  /** Messages in an item, when items are batches (see `MailboxOwner`). */
  readonly sizeOf: ((item: T) => number) | undefined;

  constructor(
    private readonly dispatcher: Dispatcher<T, K, R>,
    private readonly lanes: EventLoopLanes,
    work: HandlerSetup<T, K, R>,
  ) {
    this.userHandler = work.policy === undefined ? work.handle : work.policy(work.handle);
    this.throughput = work.throughput;
    this.sizeOf = work.sizeOf;
    this.timer = work.timer;
    this.untilTimed = work.timer?.every ?? 0;
  }

  /** Set when the dispatcher tears down: mailboxes stop at their next step. */
  closed = false;

  open(): void {
    this.lanes.attach(this.dispatcher);
  }

  route(record: KeyRecord<unknown, K>, message: T): void {
    let mailbox = record.placement as Mailbox<T, K, R> | null;
    if (mailbox === null) {
      // The key has none on the lanes: the record's mailbox (made with its first message) is placed.
      const lane = this.lanes.place();
      lane.pinned++;
      mailbox = (record.spare as Mailbox<T, K, R> | null) ?? newMailbox<T, K, R>(record);
      record.placement = mailbox.open(record.key, lane, this);
    }
    mailbox.post(message);
  }

  discard(matches: (message: T) => boolean): T[] {
    const discarded: T[] = [];
    for (const mailbox of this.liveMailboxes()) {
      // A mailbox left empty stays in its lane's FIFO until its turn, which finds nothing and retires it.
      const removed = mailbox.removeMessagesWhere(matches);
      if (removed.length === 0) continue;
      for (const m of removed) discarded.push(m);
      this.dispatcher.withdrawn(mailbox.record as KeyRecord<unknown, K>, removed.length);
    }
    return discarded;
  }

  unfinished(): T[] {
    const messages: T[] = [];
    for (const mailbox of this.liveMailboxes()) {
      if (isRunning(mailbox)) messages.push(mailbox.current as T);
      for (const m of mailbox.queuedMessages()) messages.push(m);
    }
    return messages;
  }

  /** The mailboxes of keys placed here, from the dispatcher's key table. */
  private liveMailboxes(): Array<Mailbox<T, K, R>> {
    const mailboxes: Array<Mailbox<T, K, R>> = [];
    for (const { placement } of this.dispatcher.keys.live())
      if (placement !== null) mailboxes.push(placement as Mailbox<T, K, R>);
    return mailboxes;
  }

  close(): void {
    this.closed = true;
    this.lanes.detach(this.dispatcher);
    const failures: unknown[] = [];
    for (const mailbox of this.liveMailboxes()) {
      mailbox.lane.pinned--;
      try {
        mailbox.cancel();
      } catch (err) {
        failures.push(err);
      }
    }
    if (failures.length > 0) throw failures[0];
  }

  // MailboxOwner: what mailboxes call back.
  claim(): boolean {
    // Discarded messages leave the queue at once; anything still queued may start.
    return true;
  }

  handle(message: T, context: HandlerContext<K>): ObservableInput<R> {
    // The timed start is its own method: the clock read stays out of this per-message path.
    if (this.timer !== null && --this.untilTimed === 0) this.startTiming(context as Mailbox<T, K, R>);
    return this.userHandler(message, context);
  }

  /** Times the handler about to run in `mailbox` (the context is the mailbox), unless one is being timed. */
  private startTiming(mailbox: Mailbox<T, K, R>): void {
    this.untilTimed = (this.timer as HandlerTimer).every;
    if (this.timed !== null) return;
    this.timed = mailbox;
    this.timedSince = performance.now();
  }

  emit(value: R): void {
    this.dispatcher.emit(value);
  }

  done(mailbox: Mailbox<T, K, R>, message: T): void {
    if (mailbox === this.timed) this.recordDuration();
    this.dispatcher.done(message, mailbox.record as KeyRecord<unknown, K>);
  }

  failed(mailbox: Mailbox<T, K, R>, message: T, error: unknown): void {
    if (mailbox === this.timed) this.recordDuration();
    this.dispatcher.failed(message, mailbox.record as KeyRecord<unknown, K>, error);
  }

  private recordDuration(): void {
    this.timer?.record(performance.now() - this.timedSince);
    this.timed = null;
  }

  retire(mailbox: Mailbox<T, K, R>): void {
    // Closing unpinned it, and the dispatcher forgot its keys.
    if (this.closed) return;
    mailbox.lane.pinned--;
    const record = mailbox.record as KeyRecord<unknown, K>;
    mailbox.reset();
    mailbox.state = MailboxState.Pooled;
    record.placement = null;
    this.dispatcher.keys.letGoIfIdle(record);
  }
}

/**
 * A record's mailbox, kept by it from now on (`spare` while drained): a key that comes back reopens it
 * without linking the two again.
 */
function newMailbox<T, K, R>(record: KeyRecord<unknown, K>): Mailbox<T, K, R> {
  const mailbox = new Mailbox<T, K, R>();
  mailbox.record = record;
  record.spare = mailbox;
  return mailbox;
}

function isRunning<T, K, R>(mailbox: Mailbox<T, K, R>): boolean {
  return (
    mailbox.state === MailboxState.Running ||
    mailbox.state === MailboxState.Waiting ||
    mailbox.state === MailboxState.Completing
  );
}
