import type { ObservableInput } from 'rxjs';
import type { LaneSet } from '../engine/lane-set';
import { type HandlerContext, type Mailbox, type MailboxOwner, MailboxState } from '../engine/mailbox';
import { MailboxTable } from '../engine/mailbox-table';
import type { HandlerTimer } from '../stats';
import type { LaneWork } from './lanes';
import { hottest, type KeyBacklog, type Routed, type Router } from './router';

/**
 * Routing on event-loop lanes: a mailbox per key with unfinished messages, pinned to a lane of the
 * executor when it opens, run by the lane loop of this thread. It owns the mailboxes (their table and
 * pool) and runs the user's handler for them.
 */
export class EventLoopRouter<T, K, R> implements Router<T, K>, MailboxOwner<T, K, R> {
  /** Mailboxes by key, live only while their key has unfinished messages, and the pool of drained ones. */
  private readonly mailboxes = new MailboxTable<T, K, R>();
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
  /** Unfinished messages one key may hold here; the dispatcher parks the rest. */
  private readonly maxPerKey: number;
  /** Messages in an item, when items are batches (see `MailboxOwner`). */
  readonly sizeOf: ((item: T) => number) | undefined;

  constructor(
    private readonly dispatcher: Routed<T, K, R>,
    private readonly lanes: LaneSet,
    work: LaneWork<T, K, R>,
  ) {
    this.userHandler = work.policy === undefined ? work.handle : work.policy(work.handle);
    this.throughput = work.throughput;
    this.maxPerKey = work.maxPerKey;
    this.sizeOf = work.sizeOf;
    this.timer = work.timer;
    this.untilTimed = work.timer?.every ?? 0;
  }

  /** Set when the dispatcher tears down: mailboxes stop at their next step. */
  closed = false;

  get liveMailboxes(): number {
    return this.mailboxes.live;
  }

  open(): void {
    this.lanes.attach(this.dispatcher);
  }

  route(key: K, message: T): boolean {
    const mailbox = this.mailboxes.take(key);
    if (mailbox.unfinished >= this.maxPerKey) return false;
    if (mailbox.state === MailboxState.Pooled) {
      const lane = this.lanes.pickLane();
      lane.pinned++;
      mailbox.open(key, lane, this);
    }
    mailbox.post(message);
    return true;
  }

  discard(matches: (message: T) => boolean): T[] {
    const discarded: T[] = [];
    for (const mailbox of this.mailboxes.liveMailboxes()) {
      // A mailbox left empty stays in its lane's FIFO until its turn, which finds nothing and retires it.
      const removed = mailbox.queue.removeWhere(matches);
      mailbox.unfinished -= removed.length;
      for (const m of removed) discarded.push(m);
    }
    return discarded;
  }

  unfinished(): T[] {
    const messages: T[] = [];
    for (const mailbox of this.mailboxes.liveMailboxes()) {
      if (isRunning(mailbox)) messages.push(mailbox.current as T);
      for (const m of mailbox.queue.toArray()) messages.push(m);
    }
    return messages;
  }

  backlogOf(key: K): number {
    const mailbox = this.mailboxes.get(key);
    return mailbox === undefined ? 0 : mailbox.unfinished;
  }

  hotKeys(n: number): KeyBacklog[] {
    return hottest(
      Array.from(this.mailboxes.liveMailboxes(), (mailbox) => ({
        key: mailbox.key,
        backlog: mailbox.unfinished,
      })),
      n,
    );
  }

  close(): void {
    this.closed = true;
    this.lanes.detach(this.dispatcher);
    const failures: unknown[] = [];
    for (const mailbox of this.mailboxes.liveMailboxes()) {
      mailbox.lane.pinned--;
      try {
        mailbox.cancel();
      } catch (err) {
        failures.push(err);
      }
    }
    this.mailboxes.clear();
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
    mailbox.unfinished--;
    this.dispatcher.done(message, mailbox.key);
  }

  failed(mailbox: Mailbox<T, K, R>, message: T, error: unknown): void {
    if (mailbox === this.timed) this.recordDuration();
    mailbox.unfinished--;
    this.dispatcher.failed(message, mailbox.key, error);
  }

  private recordDuration(): void {
    this.timer?.record(performance.now() - this.timedSince);
    this.timed = null;
  }

  retire(mailbox: Mailbox<T, K, R>): void {
    mailbox.lane.pinned--;
    this.mailboxes.release(mailbox);
  }
}

function isRunning<T, K, R>(mailbox: Mailbox<T, K, R>): boolean {
  return (
    mailbox.state === MailboxState.Running ||
    mailbox.state === MailboxState.Waiting ||
    mailbox.state === MailboxState.Completing
  );
}
