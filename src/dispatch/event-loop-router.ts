import type { ObservableInput } from 'rxjs';
import type { Lane } from '../engine/lane';
import type { LaneSet } from '../engine/lane-set';
import { type HandlerContext, Mailbox, type MailboxOwner, MailboxState } from '../engine/mailbox';
import type { HandlerTimer } from '../stats';
import type { LaneWork } from './lanes';
import { backlogIn, hotKeysIn, type KeyBacklog, type Routed, type Router } from './router';

/**
 * Routing on event-loop lanes: a mailbox per key with unfinished messages, pinned to a lane of the
 * executor when it opens, run by the lane loop of this thread. It owns the mailboxes (their table and
 * pool, below), places them on lanes and runs the user's handler for them.
 *
 * Placement of a new mailbox, in constant time: the lane running right now if nothing else is queued
 * on it and nothing was started within its step (no hand-off at all), else the next lane in a turn
 * shared by every dispatcher on the executor, so that keys spread evenly over the lanes.
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

  route(key: K, message: T, startNow: boolean): boolean {
    const mailbox = this.mailboxes.take(key);
    if (mailbox.unfinished >= this.maxPerKey) return false;
    if (mailbox.state === MailboxState.Pooled) {
      const lane = this.place();
      lane.pinned++;
      mailbox.open(key, lane, this);
    }
    mailbox.post(message, startNow);
    return true;
  }

  /** The lane a new mailbox is pinned to (see the class comment). */
  private place(): Lane {
    const lanes = this.lanes;
    const running = lanes.loop.freeRunningLane() as Lane | null;
    if (running !== null && running.owner === lanes) return running;
    const lane = lanes.lanes[lanes.nextLane];
    // Wraps by comparison, not `%`: an integer division costs more than the rest of the choice.
    if (++lanes.nextLane === lanes.lanes.length) lanes.nextLane = 0;
    return lane;
  }

  discard(matches: (message: T) => boolean): T[] {
    const discarded: T[] = [];
    for (const mailbox of this.mailboxes.liveMailboxes()) {
      // A mailbox left empty stays in its lane's FIFO until its turn, which finds nothing and retires it.
      const removed = mailbox.removeMessagesWhere(matches);
      for (const m of removed) discarded.push(m);
    }
    return discarded;
  }

  unfinished(): T[] {
    const messages: T[] = [];
    for (const mailbox of this.mailboxes.liveMailboxes()) {
      if (isRunning(mailbox)) messages.push(mailbox.current as T);
      for (const m of mailbox.queuedMessages()) messages.push(m);
    }
    return messages;
  }

  backlogOf(key: K): number {
    // A pooled mailbox filed under its last key has none.
    return backlogIn(this.mailboxes.records, key);
  }

  hotKeys(n: number): KeyBacklog[] {
    return hotKeysIn(this.mailboxes.records, n);
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

/** Drained mailboxes a dispatcher keeps filed under their last key; the same number again unfiled. */
export const POOL_LIMIT = 1024;

/** Once the filed pool is full, one drained mailbox in this many takes the place of a filed one. */
const REFRESH_EVERY = 16;

/** Drained mailboxes between two looks at whether filing pays. */
export const CHECK_EVERY = 4096;

/** The filed pool's size while filing does not pay: enough to notice when keys start coming back. */
export const PROBE_LIMIT = 64;

/**
 * The mailboxes of one dispatcher by key, and its pool of drained ones.
 *
 * A drained mailbox stays in the map under its last key while the filed pool has room, so a key that
 * comes back gets it back with one lookup, instead of a deletion now and an insertion then (and the
 * rehash that every few hundred insertions allocates a new table). Once `POOL_LIMIT` mailboxes are
 * filed, a drained one leaves the map for the unfiled pool, which serves new keys, except one in
 * `REFRESH_EVERY`, which takes the place of a filed one: the filed pool follows a key space that moves.
 * The one it replaces is found by a hand that walks the map in the order its keys came into it,
 * resuming where it stopped (a clock, not a list of who drained when: filing a mailbox costs nothing but
 * a count). A key that keeps coming back keeps its place in that order, so it may leave while briefly
 * filed; it then comes back as a new key. A pooled mailbox holds no messages, is on no lane and is not
 * live; memory never grows with the number of keys seen.
 *
 * In a key space too large to recur within the pool (100,000 keys), filed mailboxes are almost never
 * taken back, and the thousand of them only make the map larger for every other key. So every
 * `CHECK_EVERY` drained mailboxes the table looks at how many filed ones were taken back: fewer than half
 * a take per filed slot (about one take in eight at the full pool), and the filed pool shrinks to
 * `PROBE_LIMIT`; as many per probe, and it may grow back to `POOL_LIMIT`.
 */
export class MailboxTable<T, K, R> {
  /** Live mailboxes, and filed ones under the key they last served. */
  private readonly byKey = new Map<K, Mailbox<T, K, R>>();
  /** Walks `byKey` for filed mailboxes to let go (see `nextFiled`). */
  private hand: Iterator<Mailbox<T, K, R>> = this.byKey.values();
  private filed = 0;
  /** The unfiled pool: a stack linked through `nextPooled`, most recently drained (cache-warm) on top. */
  private unfiled: Mailbox<T, K, R> | null = null;
  private unfiledCount = 0;
  /** Drained mailboxes until the next one replaces a filed one (while the filed pool is full). */
  private untilRefresh = REFRESH_EVERY;
  /** How many may be filed now: `POOL_LIMIT` while filing pays, else `PROBE_LIMIT`. */
  private fileLimit = POOL_LIMIT;
  /** Drained mailboxes until the next look at whether filing pays, and filed ones taken back since the last. */
  private untilCheck = CHECK_EVERY;
  private revived = 0;

  /** The mailboxes by key, live ones and filed ones (which hold no messages), for the key queries. */
  get records(): ReadonlyMap<K, Mailbox<T, K, R>> {
    return this.byKey;
  }

  /** Mailboxes holding messages. */
  get live(): number {
    return this.byKey.size - this.filed;
  }

  /** Keys in the map: those with a live mailbox and those with a filed one. */
  get size(): number {
    return this.byKey.size;
  }

  /** The live mailbox of `key`, if it has one. */
  get(key: K): Mailbox<T, K, R> | undefined {
    const mailbox = this.byKey.get(key);
    return mailbox === undefined || mailbox.state === MailboxState.Pooled ? undefined : mailbox;
  }

  /**
   * The mailbox of `key`: its live one, the one filed under it, or one from the pool (or new), filed
   * under `key`. Unless it was live it is still `Pooled`: the caller opens it on a lane.
   */
  take(key: K): Mailbox<T, K, R> {
    const known = this.byKey.get(key);
    if (known !== undefined) {
      if (known.state === MailboxState.Pooled) {
        this.filed--;
        this.revived++;
      }
      return known;
    }
    let mailbox = this.unfiled;
    if (mailbox === null) mailbox = new Mailbox<T, K, R>();
    else {
      this.unfiled = mailbox.nextPooled;
      mailbox.nextPooled = null;
      this.unfiledCount--;
    }
    mailbox.key = key;
    this.byKey.set(key, mailbox);
    return mailbox;
  }

  /** `mailbox` ran dry: into the pool (its last user must not touch it after this). */
  release(mailbox: Mailbox<T, K, R>): void {
    mailbox.reset();
    mailbox.state = MailboxState.Pooled;
    if (this.filed < this.fileLimit) this.filed++;
    else this.releaseWhenFull(mailbox);
    if (--this.untilCheck === 0) this.checkFiling();
  }

  /** Sizes the filed pool by how often filed mailboxes were taken back since the last look. */
  private checkFiling(): void {
    this.fileLimit = this.revived * 2 >= this.fileLimit ? POOL_LIMIT : PROBE_LIMIT;
    this.untilCheck = CHECK_EVERY;
    this.revived = 0;
    while (this.filed > this.fileLimit) {
      this.leave(this.nextFiled());
      this.filed--;
    }
  }

  /** The filed pool is full: `mailbox` leaves the map, or, one time in `REFRESH_EVERY`, a filed one does. */
  private releaseWhenFull(mailbox: Mailbox<T, K, R>): void {
    if (--this.untilRefresh > 0) {
      this.leave(mailbox);
      return;
    }
    this.untilRefresh = REFRESH_EVERY;
    // `mailbox` is filed in its place (if the hand finds `mailbox` itself, it leaves as above).
    this.leave(this.nextFiled());
  }

  /** The next pooled mailbox in the map from where the hand stopped, in the order keys came in. */
  private nextFiled(): Mailbox<T, K, R> {
    for (;;) {
      const step = this.hand.next();
      if (step.done) this.hand = this.byKey.values();
      else if (step.value.state === MailboxState.Pooled) return step.value;
    }
  }

  /** The live mailboxes. */
  liveMailboxes(): Array<Mailbox<T, K, R>> {
    const live: Array<Mailbox<T, K, R>> = [];
    for (const mailbox of this.byKey.values()) if (mailbox.state !== MailboxState.Pooled) live.push(mailbox);
    return live;
  }

  /** Forgets every mailbox, live and pooled. */
  clear(): void {
    this.byKey.clear();
    this.hand = this.byKey.values();
    this.filed = 0;
    this.unfiled = null;
    this.unfiledCount = 0;
  }

  /** A pooled mailbox leaves the map, onto the unfiled stack if it has room. */
  private leave(mailbox: Mailbox<T, K, R>): void {
    this.byKey.delete(mailbox.key);
    if (this.unfiledCount === POOL_LIMIT) return;
    mailbox.nextPooled = this.unfiled;
    this.unfiled = mailbox;
    this.unfiledCount++;
  }
}
