import { type ResourceLimits, type TransferListItem, Worker } from 'node:worker_threads';
import { type ExecutorClient, terminateAll } from '../engine/event-loop-lanes';
import { ExecutorClosedError } from '../errors';
import type { MessageWait } from '../internal/message-wait';
import { textOf } from '../internal/text-of';
import { BlockWatch } from './block-watch';
import { ThreadBlockedError, ThreadCrashLoopError, ThreadExitedError } from './errors';
import {
  HELD_TICKET,
  issueTicket,
  type ThreadInit,
  type TransferItem,
  ticketStarted,
  transferListMisuse,
  transfersLost,
  WATCH_SLOTS,
  withdrawTicket,
} from './protocol';
import type { ThreadHandler } from './thread-handler';
import { ThreadSlot } from './thread-slot';
import type { TicketBoard } from './tickets';
import {
  eachToThreadAlone,
  type MainSide,
  readToMain,
  writeAnnounce,
  writeClose,
  writeData,
  writeNoData,
  writeOpen,
  writePage,
  writeRelease,
  writeRetry,
  writeStop,
  writeWaited,
} from './wire';
import { threadWorkerEntry } from './worker-entry';

/** A key's place on the thread lanes, held by its dispatcher while the key has unfinished messages. */
export interface KeyPlacement {
  readonly slot: ThreadSlot;
  /** Names the key's mailbox in the thread (any key type maps to it). */
  readonly mailboxId: number;
  /** Messages of the key posted and not finished: the key stays on `slot` while this is > 0. */
  unfinished: number;
}

/** A message posted to a thread and not finished. */
export interface PostedMessage {
  readonly id: number;
  readonly client: ThreadClient;
  readonly placement: KeyPlacement;
  /** Its slot in the client's ticket pages: the thread claims it before starting the message. */
  readonly ticket: number;
  readonly key: unknown;
  readonly message: unknown;
  /** What the client's `transfer` option listed for it (moved, not copied, once its thread claims it). */
  readonly transfers: readonly TransferItem[] | undefined;
  /** Set once a run of it failed in a client that holds failures: its thread holds it (see protocol.ts). */
  hold: Hold | null;
  /** A thread died of it once already: if one dies while it runs again, it is blamed at once. */
  blamed: boolean;
  /** What the crashes of its thread showed about it (see `died`); null until it is running when one dies. */
  suspicion: Suspicion | null;
  /** When it was last sent to its thread: a crash measures from this how long it had run. */
  sentAt: number;
  /** Its transfer list moved to its thread (when the thread claimed it): a thread that dies takes it along. */
  dataMoved: boolean;
}

/** What the crashes it was running through showed about a message. */
export interface Suspicion {
  /** The longest it had run when a crash cut it short: alone again, it is given twice that to crash. */
  longestCutRunMs: number;
  /** Its current run began alone and outlived its grace without a crash (reset when it is sent again). */
  outlivedGrace: boolean;
}

/** A held message's state on the main thread. */
export interface Hold {
  /** The item of the RETRY its thread runs now (`WHOLE`: the message itself), or null while none runs. */
  retrying: number | null;
  /**
   * The failure that held it, until its thread is asked to run it again: till then its thread may
   * still complete the run it reported failed (a value that could not cross failed it here).
   */
  firstFailure: { error: unknown } | null;
}

/** A dispatcher's router as a thread executor sees it. */
export interface ThreadClient extends ExecutorClient {
  /** Set by `attach`: names the dispatcher in the protocol. */
  channel: number;
  readonly handler: ThreadHandler<unknown, unknown>;
  readonly throughput: number;
  readonly tickets: TicketBoard;
  /** A run that fails is held in its thread until `release` (a failure policy decides what follows). */
  readonly holdsFailures: boolean;
  /** A message's wait before posting, for its thread's tracing; undefined when the dispatcher is not traced. */
  readonly waitOf: ((message: unknown) => MessageWait | undefined) | undefined;
  emit(value: unknown): void;
  /** The message's handler completed in its thread. */
  done(posted: PostedMessage): void;
  /** The message's handler failed in its thread, or its thread gave up on it (it died, or it could not be posted). */
  failed(posted: PostedMessage, error: unknown): void;
  /** A run of a held message ended in its thread (its first failure holds it); it stays posted and held. */
  ranHeld(posted: PostedMessage, failed: boolean, error?: unknown): void;
}

/** What a lane keeps while it recovers from a crash (see `died`). */
interface Recovery {
  /**
   * Messages held back from the thread, in posting order, while it runs the suspects of a crash one at a
   * time (or while the lane is down): sent once the last suspect has ended. Null when none are held back.
   */
  deferred: Map<number, PostedMessage> | null;
  /** Messages that were running when the last thread died, each to run alone on the replacement, in turn. */
  suspects: PostedMessage[];
  /** The suspect running alone now, until it ends or its grace does. */
  alone: PostedMessage | null;
  /** Ends the alone run's grace (see `ISOLATION_GRACE_MS`), while one runs. */
  aloneGrace: NodeJS.Timeout | null;
  /** The message whose handler held the thread past `maxBlockingMs`, and its error, while its thread is terminated. */
  blocked: { posted: PostedMessage; error: unknown } | null;
}

const MINUTE_MS = 60_000;
/**
 * How long a suspect of a crash runs alone on the replacement before the next suspect (and then
 * everything held back) runs beside it: a crash at a handler's start shows at once, and a handler
 * that runs long or never ends must not hold its lane back after a crash. A suspect that had run
 * longer when a crash cut it short gets twice that, up to `MAX_ISOLATION_GRACE_MS`, so that one
 * crashing its thread late in its run still crashes it alone.
 */
const ISOLATION_GRACE_MS = 1000;
/** Bounds a suspect's grace: a lane is never held back longer for one suspect. */
const MAX_ISOLATION_GRACE_MS = 60_000;

/**
 * The worker threads behind a `ThreadExecutor` (see there for the model): one slot per thread lane,
 * the dispatchers (channels) running on them, and every message posted and not finished, by id.
 */
export class ThreadLanes {
  private readonly slots: ThreadSlot[];
  /** Each lane's recovery from a crash, by lane index. */
  private readonly recovery: Recovery[];
  /** Running dispatchers by channel. */
  private readonly clients = new Map<number, ThreadClient>();
  /** Messages posted and not finished, by id; insertion order is posting order (replayed after a crash). */
  private readonly posted = new Map<number, PostedMessage>();
  private nextChannel = 0;
  private nextMessageId = 0;
  /** Where the round-robin scan for an idle thread starts next. */
  private idleCursor = 0;
  private isClosed = false;
  /** Sees, from this thread, a handler that holds its thread (long turns, `maxBlockingMs`). */
  private readonly blockWatch: BlockWatch;

  constructor(
    workers: number,
    private readonly resourceLimits: ResourceLimits | undefined,
    private readonly maxRespawnsPerMinute: number,
    /** The shared executor's lanes stop their threads whenever no dispatcher runs on them. */
    private readonly stopWhenIdle: boolean,
    /** A handler run that holds its thread this long has its thread replaced; undefined: no bound. */
    private readonly maxBlockingMs: number | undefined,
  ) {
    this.slots = Array.from(
      { length: workers },
      (_, i) => new ThreadSlot(i, (slot, ops) => this.postSeparately(slot, ops)),
    );
    this.recovery = this.slots.map(() => ({
      deferred: null,
      suspects: [],
      alone: null,
      aloneGrace: null,
      blocked: null,
    }));
    this.blockWatch = new BlockWatch(this.slots, maxBlockingMs, (slot, id) => this.blocked(slot, id));
  }

  /** Reports handler runs that hold their thread `thresholdMs` or longer; returns the function that stops it. */
  watchLongTurns(thresholdMs: number, listener: (laneIndex: number, durationMs: number) => void): () => void {
    return this.blockWatch.watch(thresholdMs, listener);
  }

  /** The handler of `messageId` held `slot`'s thread past `maxBlockingMs`: terminate the thread. */
  private blocked(slot: ThreadSlot, messageId: number): void {
    const posted = this.posted.get(messageId);
    const worker = slot.worker;
    if (posted === undefined || posted.placement.slot !== slot || worker === null) return;
    const error = new ThreadBlockedError(slot.index, this.maxBlockingMs as number, posted.key);
    (this.recovery[slot.index] as Recovery).blocked = { posted, error };
    void worker.terminate();
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Threads running now (they start with the first message; a stopped or dead one is not counted). */
  get liveThreads(): number {
    let n = 0;
    for (const slot of this.slots) if (slot.worker !== null) n++;
    return n;
  }

  /** Thread ids of the running threads, by lane (null where none runs): for diagnostics. */
  get threadIds(): ReadonlyArray<number | null> {
    return this.slots.map((slot) => slot.worker?.threadId ?? null);
  }

  /** A dispatcher's router starts on these lanes. */
  attach(client: ThreadClient): void {
    if (this.isClosed) throw new ExecutorClosedError('ThreadExecutor');
    client.channel = ++this.nextChannel;
    this.clients.set(client.channel, client);
  }

  /**
   * The dispatcher ended: withdraw every message of it that has not started (no thread
   * starts one after this returns), forget them, and cancel what its threads still run for it.
   */
  detach(client: ThreadClient): void {
    if (!this.clients.delete(client.channel)) return;
    // Those already started run on until CLOSE reaches their thread, which cancels them.
    this.withdraw(client, () => true);
    for (const posted of this.postedBy(client)) this.forget(posted);
    for (const slot of this.slots) {
      if (slot.opened.delete(client.channel)) slot.write(writeClose, client.channel);
    }
    if (this.stopWhenIdle && this.clients.size === 0) void this.stopThreads(false);
  }

  /**
   * Takes back the posted messages of `client` that `matches` accepts and no thread has
   * started: they never will. Returns them in posting order; running ones are left alone.
   */
  withdraw(client: ThreadClient, matches: (message: unknown) => boolean): PostedMessage[] {
    const candidates = this.postedBy(client).filter((posted) => matches(posted.message));
    const withdrawn: PostedMessage[] = [];
    // Newest first: a thread claims a key's messages oldest first, so once a claim beats a withdrawal,
    // every older message of that key was claimed before it, and no key is left with a gap (a message
    // withdrawn while a later one of its key starts).
    for (let i = candidates.length - 1; i >= 0; i--) {
      const posted = candidates[i];
      if (!withdrawTicket(client.tickets.pages, posted.ticket, posted.id)) continue;
      this.forget(posted);
      withdrawn.push(posted);
    }
    return withdrawn.reverse();
  }

  /** Posted messages of `client` not finished yet (running or queued), in posting order. */
  postedBy(client: ThreadClient): PostedMessage[] {
    const mine: PostedMessage[] = [];
    for (const posted of this.posted.values()) if (posted.client === client) mine.push(posted);
    return mine;
  }

  /** A new ticket page of `client`: every thread that runs its messages must see it. */
  sharePage(client: ThreadClient, page: Int32Array): void {
    for (const slot of this.slots)
      if (slot.opened.has(client.channel)) slot.write(writePage, client.channel, page);
  }

  /** The thread a new key is pinned to (see the class comment). */
  pickThread(): ThreadSlot {
    const slots = this.slots;
    const n = slots.length;
    for (let i = 0; i < n; i++) {
      const slot = slots[(this.idleCursor + i) % n];
      if (slot.idle) {
        this.idleCursor = (slot.index + 1) % n;
        return slot;
      }
    }
    let best: ThreadSlot | null = null;
    for (const slot of slots) {
      // A lane that is down takes a key only when every lane is: its messages wait for its next thread.
      if (best !== null && slot.down !== best.down) {
        if (slot.down) continue;
        best = slot;
        continue;
      }
      if (
        best === null ||
        slot.unfinished < best.unfinished ||
        (slot.unfinished === best.unfinished && slot.pinned < best.pinned)
      ) {
        best = slot;
      }
    }
    return best as ThreadSlot;
  }

  /** Posts one admitted message to the thread of its key (batched; see protocol.ts). */
  post(
    client: ThreadClient,
    placement: KeyPlacement,
    key: unknown,
    message: unknown,
    transfers: readonly TransferItem[] | undefined,
  ): void {
    const id = ++this.nextMessageId;
    const ticket = client.tickets.take();
    const posted: PostedMessage = {
      id,
      client,
      placement,
      ticket,
      key,
      message,
      transfers,
      hold: null,
      blamed: false,
      suspicion: null,
      sentAt: 0,
      dataMoved: false,
    };
    this.posted.set(id, posted);
    placement.slot.hold();
    this.send(posted);
  }

  /**
   * Sends a posted message to its thread (again, after a crash), its ticket set to wait for it; a held
   * one starts held there, and runs again the retry it was running.
   */
  private send(posted: PostedMessage): void {
    const deferred = this.recoveryOf(posted).deferred;
    if (deferred !== null) deferred.set(posted.id, posted);
    else this.sendNow(posted);
  }

  private sendNow(posted: PostedMessage): void {
    const { client, placement, hold } = posted;
    const slot = this.openedSlot(client, placement.slot);
    posted.sentAt = Date.now();
    if (posted.suspicion !== null) posted.suspicion.outlivedGrace = false;
    if (hold === null) {
      issueTicket(client.tickets.pages, posted.ticket, posted.id);
      if (client.waitOf !== undefined) this.tellWait(slot, client.channel, posted);
    }
    if (hold === null && posted.transfers !== undefined) {
      // Its data stays here until its thread claims it (see protocol.ts): a thread that dies before
      // that leaves it whole for the replacement.
      posted.dataMoved = false;
      slot.write(writeAnnounce, client.channel, placement.mailboxId, posted.id, posted.ticket, posted.key);
      return;
    }
    // A held message had started: sent again, its data (still here, or it would have failed) goes with it.
    if (posted.transfers !== undefined) {
      posted.dataMoved = true;
      slot.addTransfers(posted.transfers);
    }
    const ticket = hold === null ? posted.ticket : HELD_TICKET;
    slot.pushRun(client.channel, placement.mailboxId, posted.id, ticket, posted.key, posted.message);
    if (hold !== null && hold.retrying !== null)
      slot.write(writeRetry, client.channel, posted.id, hold.retrying);
  }

  /** WAITED ahead of a traced dispatcher's message: its thread puts the wait on the handler's span. */
  private tellWait(slot: ThreadSlot, channel: number, posted: PostedMessage): void {
    const wait = (posted.client.waitOf as (message: unknown) => MessageWait | undefined)(posted.message);
    if (wait !== undefined) slot.write(writeWaited, channel, posted.id, wait.since, wait.parkedMs);
  }

  /** `slot`, with a thread running that knows `client`'s channel. */
  private openedSlot(client: ThreadClient, slot: ThreadSlot): ThreadSlot {
    if (slot.worker === null) this.spawn(slot);
    if (!slot.opened.has(client.channel)) {
      slot.opened.add(client.channel);
      const { moduleUrl, exportName } = client.handler;
      // A copy of the pages so far: later pages follow as PAGE operations.
      slot.write(
        writeOpen,
        client.channel,
        moduleUrl,
        exportName,
        client.throughput,
        [...client.tickets.pages],
        client.holdsFailures,
      );
    }
    return slot;
  }

  /** The thread of a held message runs it again: itself (`WHOLE`), or item `item` of it alone. */
  retry(posted: PostedMessage, item: number): void {
    if (this.posted.get(posted.id) !== posted || posted.hold === null) return;
    posted.hold.retrying = item;
    posted.hold.firstFailure = null;
    // Held back from its thread: the retry is sent with it.
    if (this.recoveryOf(posted).deferred?.has(posted.id)) return;
    const slot = this.openedSlot(posted.client, posted.placement.slot);
    posted.sentAt = Date.now();
    slot.write(writeRetry, posted.client.channel, posted.id, item);
  }

  /** A held message is done: it leaves the books, and its thread lets its key go on. */
  release(posted: PostedMessage): void {
    if (this.posted.get(posted.id) !== posted) return;
    this.forget(posted);
    const slot = posted.placement.slot;
    if (slot.worker !== null && slot.opened.has(posted.client.channel))
      slot.write(writeRelease, posted.client.channel, posted.id);
  }

  /** A posted message leaves the executor's books: finished, failed, withdrawn or its dispatcher ended. */
  private forget(posted: PostedMessage): void {
    this.posted.delete(posted.id);
    posted.client.tickets.give(posted.ticket);
    posted.placement.slot.letGo();
    this.runEnded(posted);
  }

  /** A run of `posted` ended (or it left): if it was the suspect running alone, the next one runs. */
  private runEnded(posted: PostedMessage): void {
    const slot = posted.placement.slot;
    if ((this.recovery[slot.index] as Recovery).alone !== posted) return;
    this.endAlone(slot);
    this.runSuspects(slot);
  }

  private recoveryOf(posted: PostedMessage): Recovery {
    return this.recovery[posted.placement.slot.index] as Recovery;
  }

  private endAlone(slot: ThreadSlot): void {
    const recovery = this.recovery[slot.index] as Recovery;
    recovery.alone = null;
    if (recovery.aloneGrace !== null) clearTimeout(recovery.aloneGrace);
    recovery.aloneGrace = null;
  }

  /**
   * After a crash: sends the next suspect to run alone on `slot`'s thread, or, once none is left, every
   * message held back, in posting order.
   */
  private runSuspects(slot: ThreadSlot): void {
    const recovery = this.recovery[slot.index] as Recovery;
    if (slot.down || recovery.alone !== null || this.isClosed) return;
    while (recovery.suspects.length > 0) {
      const next = recovery.suspects.shift() as PostedMessage;
      if (this.posted.get(next.id) !== next) continue; // it left meanwhile
      recovery.deferred?.delete(next.id);
      recovery.alone = next;
      // One that does not end within its grace (a long or endless async handler) goes on beside the next.
      recovery.aloneGrace = setTimeout(() => this.graceOver(slot, next), isolationGraceOf(next));
      recovery.aloneGrace.unref();
      this.sendNow(next);
      return;
    }
    const deferred = recovery.deferred;
    recovery.deferred = null;
    if (deferred === null) return;
    for (const posted of deferred.values()) if (this.posted.get(posted.id) === posted) this.sendNow(posted);
  }

  /** `suspect` ran alone through its grace without a crash: the next suspect runs beside it. */
  private graceOver(slot: ThreadSlot, suspect: PostedMessage): void {
    if ((this.recovery[slot.index] as Recovery).alone !== suspect) return;
    if (suspect.suspicion !== null) suspect.suspicion.outlivedGrace = true;
    this.endAlone(slot);
    this.runSuspects(slot);
  }

  private spawn(slot: ThreadSlot): void {
    const watch = new Int32Array(new SharedArrayBuffer(4 * WATCH_SLOTS));
    const init: ThreadInit = { index: slot.index, watch };
    slot.watchMemory = watch;
    const worker = new Worker(threadWorkerEntry(), { workerData: init, resourceLimits: this.resourceLimits });
    slot.worker = worker;
    slot.opened.clear();
    if (slot.unfinished === 0) worker.unref();
    let lastError: unknown;
    worker.on('message', (batch: unknown[]) => readToMain(batch, this.fromThreads));
    worker.on('error', (err) => {
      lastError = err;
    });
    worker.on('exit', (code) => {
      if (slot.worker === worker) this.died(slot, code, lastError);
    });
  }

  /** Values and outcomes coming back from the threads (see wire.ts). */
  private readonly fromThreads: MainSide = {
    want: (messageId) => this.sendData(messageId),
    // A value of a message no longer posted (failed, or its dispatcher ended) is dropped.
    next: (messageId, value) => this.posted.get(messageId)?.client.emit(value),
    done: (messageId) => this.ended(messageId, false, undefined),
    failed: (messageId, error) => this.ended(messageId, true, error),
  };

  /**
   * Its thread claimed an announced message: its data goes now, its transfer list moving with it. A
   * message no longer posted needs nothing: its dispatcher ended (CLOSE cancels it there) or its thread died.
   */
  private sendData(id: number): void {
    const posted = this.posted.get(id);
    if (posted === undefined || posted.transfers === undefined) return;
    const { client, placement } = posted;
    const slot = placement.slot;
    if (slot.worker === null || !slot.opened.has(client.channel)) return;
    const misuse = transferListMisuse(posted.transfers, slot.pendingTransfers);
    if (misuse) {
      slot.write(writeNoData, client.channel, id);
      this.failHeld(
        posted,
        new TypeError(
          `ThreadExecutor: the transfer list of the message for key ${textOf(posted.key)} ${misuse}`,
        ),
      );
      return;
    }
    posted.dataMoved = true;
    slot.addTransfers(posted.transfers);
    slot.write(writeData, client.channel, id, posted.message);
  }

  /** A run ended in its thread: done, or failed with `error`. */
  private ended(id: number, failed: boolean, error: unknown): void {
    const posted = this.posted.get(id);
    if (posted === undefined) return; // it failed already, its dispatcher ended, or its thread has since died
    const unheld = failed || posted.hold === null ? null : posted.hold.firstFailure;
    if (unheld !== null) {
      // Its thread completed the run that failed here: it holds nothing to run again, so it is gone.
      this.failHeld(posted, unheld.error);
      return;
    }
    if (posted.hold !== null || (failed && posted.client.holdsFailures)) {
      // Its thread holds it: the run's end goes to the client, and the message stays until released.
      if (posted.hold === null) posted.hold = { retrying: null, firstFailure: { error } };
      else posted.hold.retrying = null;
      posted.client.ranHeld(posted, failed, error);
      this.runEnded(posted);
      return;
    }
    this.forget(posted);
    if (failed) posted.client.failed(posted, error);
    else posted.client.done(posted);
  }

  /**
   * A thread died on its own. Only the messages running on it are suspects: each runs alone on the
   * replacement (see `crashVerdict`), so that the one that keeps crashing it is blamed
   * (`ThreadCrashLoopError`, to its failure policy like a handler's error); every other message it held
   * is sent again as it was, no attempt counted. Past `maxRespawnsPerMinute` the lane waits for its
   * budget instead of failing anything. A running message whose transferred data went down with the
   * thread cannot run again: the only one running is blamed at once; one of several fails with
   * `ThreadExitedError`.
   */
  private died(slot: ThreadSlot, exitCode: number, error: unknown): void {
    const recovery = this.recovery[slot.index] as Recovery;
    slot.worker = null;
    slot.watchMemory = null;
    slot.opened.clear();
    slot.dropPending();
    this.endAlone(slot);
    const blocked = recovery.blocked;
    recovery.blocked = null;
    const deferred = recovery.deferred ?? new Map<number, PostedMessage>();
    const held: PostedMessage[] = [];
    for (const posted of this.posted.values()) if (posted.placement.slot === slot) held.push(posted);
    // What ran on the dead thread: a message held back from it, or a suspect awaiting its turn, never
    // reached it (the latter's ticket still reads started from the thread before).
    const waiting = recovery.suspects.filter((posted) => held.includes(posted));
    const running = held.filter(
      (posted) => !deferred.has(posted.id) && !waiting.includes(posted) && this.started(posted),
    );
    const { culprit, suspects, lost } = crashVerdict(held, running, waiting, blocked?.posted ?? null);
    noteCrash(running, Date.now());
    recovery.suspects = suspects;
    // Everything else waits for the suspects, in posting order: a suspect is the oldest of its key here.
    recovery.deferred = new Map();
    for (const posted of held) {
      if (suspects.includes(posted) || lost.includes(posted)) continue;
      if (posted !== culprit || this.heldAfterBlame(posted)) recovery.deferred.set(posted.id, posted);
    }
    // Held there under a policy, the culprit is sent again as a held message, not to run again at once.
    if (culprit !== null && this.heldAfterBlame(culprit)) {
      if (culprit.hold === null) culprit.hold = { retrying: null, firstFailure: null };
      else culprit.hold.retrying = null;
    }
    this.respawn(slot);
    for (const posted of lost) this.failHeld(posted, new ThreadExitedError(slot.index, exitCode, error));
    if (culprit === null) return;
    this.blame(
      culprit,
      blocked?.posted === culprit
        ? blocked.error
        : new ThreadCrashLoopError(slot.index, exitCode, error, culprit.key, dataLost(culprit)),
    );
  }

  /**
   * Whether `posted` was running on its thread: started and not ended (a held one: a retry under way).
   * A claimed message still waiting for its data never ran.
   */
  private started(posted: PostedMessage): boolean {
    if (posted.hold !== null) return posted.hold.retrying !== null;
    if (posted.transfers !== undefined && !posted.dataMoved) return false;
    return ticketStarted(posted.client.tickets.pages, posted.ticket);
  }

  /** Replaces `slot`'s dead thread now, or once its respawn budget allows, and sends it its messages. */
  private respawn(slot: ThreadSlot): void {
    const now = Date.now();
    slot.respawnTimes = slot.respawnTimes.filter((t) => now - t < MINUTE_MS);
    if (slot.respawnTimes.length < this.maxRespawnsPerMinute) {
      slot.respawnTimes.push(now);
      if (slot.unfinished > 0) this.spawn(slot);
      this.runSuspects(slot);
      return;
    }
    slot.down = true;
    const retryAt = (slot.respawnTimes[0] ?? now) + MINUTE_MS;
    setTimeout(() => {
      slot.down = false;
      if (this.isClosed) return;
      slot.respawnTimes.push(Date.now());
      if (slot.unfinished > 0) this.spawn(slot);
      this.runSuspects(slot);
    }, retryAt - now).unref();
  }

  /**
   * The message that keeps crashing its thread: its run fails with `error`, like a handler's. Under a
   * failure policy it stays held on the replacement (its key waits) while the policy decides.
   */
  private blame(posted: PostedMessage, error: unknown): void {
    if (this.posted.get(posted.id) !== posted) return;
    posted.blamed = true;
    if (this.heldAfterBlame(posted)) posted.client.ranHeld(posted, true, error);
    else this.failHeld(posted, error);
  }

  /**
   * Whether a blamed message stays held on its thread for its failure policy: not without a policy, nor
   * when its data moved to the dead thread (it cannot run again: each run the policy asks for fails).
   */
  private heldAfterBlame(posted: PostedMessage): boolean {
    return posted.client.holdsFailures && !dataLost(posted);
  }

  private failHeld(posted: PostedMessage, error: unknown): void {
    if (this.posted.get(posted.id) !== posted) return; // its dispatcher ended meanwhile
    this.forget(posted);
    posted.client.failed(posted, error);
  }

  /**
   * A batch failed to clone: post its records one by one, each message in a RUN of its own, failing
   * only the messages that cannot be cloned.
   */
  private postSeparately(slot: ThreadSlot, ops: unknown[]): void {
    const worker = slot.worker;
    if (worker === null) return;
    eachToThreadAlone(ops, (record, of) => {
      if (of === undefined) {
        worker.postMessage(record);
        return;
      }
      const posted = this.posted.get(of.messageId);
      if (posted === undefined) return;
      const transfers = of.part === 'ticket' ? [] : (posted.transfers ?? []);
      try {
        worker.postMessage(record, transfers as readonly TransferListItem[]);
      } catch (err) {
        if (of.part === 'data') {
          // Its thread claimed the message and waits for data that will not come: that run ends there.
          const noData: unknown[] = [];
          writeNoData(noData, posted.client.channel, posted.id);
          worker.postMessage(noData);
        }
        this.failHeld(posted, notCloneable(posted.key, err));
      }
    });
  }

  /** Stops every thread: each cancels its handlers and exits; resolves once all have exited. */
  private stopThreads(awaited: boolean): Promise<void> {
    const exits: Promise<unknown>[] = [];
    for (const slot of this.slots) {
      const worker = slot.worker;
      if (worker === null) continue;
      slot.write(writeStop);
      slot.flush();
      slot.worker = null;
      slot.opened.clear();
      // An awaited stop (close) keeps the process alive until the thread has exited; an idle stop never does.
      if (awaited) worker.ref();
      exits.push(stopped(worker));
    }
    return Promise.all(exits).then(() => undefined);
  }

  /** Cancels every dispatcher still running here and stops the threads; resolves once all have exited. */
  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    this.blockWatch.stop();
    let failure: unknown = null;
    try {
      terminateAll(this.clients.values(), new ExecutorClosedError('ThreadExecutor'), 'ThreadExecutor');
    } catch (err) {
      failure = err;
    }
    await this.stopThreads(true);
    if (failure !== null) throw failure;
  }
}

/** Who a dead thread's end falls on (see `crashVerdict`). */
interface CrashVerdict {
  /** The message blamed for it, if the crash shows which one it is. */
  culprit: PostedMessage | null;
  /** Messages that were running (then those still awaiting their turn), each to run alone, in this order. */
  suspects: PostedMessage[];
  /** Messages whose transferred data went down with the thread: they cannot run again. */
  lost: PostedMessage[];
}

/**
 * Weighs a thread's end from what it `held` and what was `running` on it. Terminated for holding it
 * past `maxBlockingMs` (`blocked`), the thread had no crash: that message is to blame, the others are
 * innocent. Otherwise the culprit is a message a thread died of before (blamed, running again), or the
 * only message running when it was running at an earlier crash too (or its data is gone, so it cannot
 * run alone to clear itself): alone, nothing else can have crashed it. Else every running message is a
 * suspect; one whose run began alone and outlived its grace goes after the others, since a crash that
 * shows sooner than that in another's run is that other's.
 */
function crashVerdict(
  held: PostedMessage[],
  running: PostedMessage[],
  waiting: PostedMessage[],
  blocked: PostedMessage | null,
): CrashVerdict {
  if (blocked !== null) {
    const culprit = held.includes(blocked) ? blocked : null;
    const lost = held.filter((posted) => posted !== culprit && dataLost(posted));
    return { culprit, suspects: waiting.filter((posted) => !lost.includes(posted)), lost };
  }
  const only = running.length === 1 ? (running[0] as PostedMessage) : null;
  const culprit =
    running.find((posted) => posted.blamed) ??
    (only !== null && (only.suspicion !== null || dataLost(only)) ? only : null);
  const lost = held.filter((posted) => posted !== culprit && dataLost(posted));
  const suspects = running.filter((posted) => posted !== culprit && !lost.includes(posted));
  suspects.sort((a, b) => Number(outlivedGrace(a)) - Number(outlivedGrace(b)));
  // Suspects of an earlier crash that have not run alone yet still get their turn.
  suspects.push(...waiting.filter((posted) => !lost.includes(posted)));
  return { culprit, suspects, lost };
}

function outlivedGrace(posted: PostedMessage): boolean {
  return posted.suspicion?.outlivedGrace ?? false;
}

/** Records on each of the `running` messages that a crash cut its run short at `now`. */
function noteCrash(running: PostedMessage[], now: number): void {
  for (const posted of running) {
    const ranMs = now - posted.sentAt;
    const suspicion = posted.suspicion ?? { longestCutRunMs: 0, outlivedGrace: false };
    suspicion.longestCutRunMs = Math.max(suspicion.longestCutRunMs, ranMs);
    posted.suspicion = suspicion;
  }
}

/** How long `suspect` runs alone before the next suspect joins it (see `ISOLATION_GRACE_MS`). */
function isolationGraceOf(suspect: PostedMessage): number {
  const cutAfterMs = suspect.suspicion?.longestCutRunMs ?? 0;
  return Math.min(MAX_ISOLATION_GRACE_MS, Math.max(ISOLATION_GRACE_MS, 2 * cutAfterMs));
}

/** Whether the data `posted` transferred went to a thread that is gone (see `transfersLost`). */
function dataLost(posted: PostedMessage): boolean {
  return posted.transfers !== undefined && posted.dataMoved && transfersLost(posted.transfers);
}

/** How long a thread may take to honour STOP (a handler may be stuck in a loop) before it is terminated. */
const STOP_GRACE_MS = 1000;

/** Resolves when `worker` has exited; terminates it if it has not within the grace period. */
function stopped(worker: Worker): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => void worker.terminate(), STOP_GRACE_MS);
    force.unref();
    worker.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
  });
}

/**
 * Why a message of `key` could not cross to a thread lane: the key itself (it travels with the message,
 * so the key selector must return a cloneable value there) or the message. The structured-clone error
 * is its cause.
 */
function notCloneable(key: unknown, err: unknown): TypeError {
  // A DataCloneError is a DOMException, which is not an Error here: read its fields as they are.
  const { name, message } = (err ?? {}) as { name?: unknown; message?: unknown };
  const reason = typeof message === 'string' ? `${String(name)}: ${message}` : 'it cannot be cloned';
  const what = isCloneable(key)
    ? `the message of key ${textOf(key)} cannot be cloned to a thread lane`
    : `the key ${textOf(key)} cannot be cloned to a thread lane, where a key travels with its message: \`key\` must return a value structuredClone accepts there`;
  return new TypeError(`ThreadExecutor: ${what} (${reason})`, { cause: err });
}

function isCloneable(value: unknown): boolean {
  try {
    structuredClone(value);
    return true;
  } catch {
    return false;
  }
}
