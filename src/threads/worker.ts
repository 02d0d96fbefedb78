/**
 * The entry of a thread lane. It runs the same engine as event-loop lanes (mailboxes with fair turns on
 * a lane loop, async handlers releasing the lane), with one lane per thread; the main thread keeps the
 * window, the key → thread pinning and the output. Imports only the engine, rxjs, the protocol and its
 * records (wire.ts).
 */
import { parentPort, type TransferListItem, workerData } from 'node:worker_threads';
import { Observable, type ObservableInput, type Subscription } from 'rxjs';
import { followResult } from '../engine/handler-result';
import { Lane } from '../engine/lane';
import { threadLoop } from '../engine/lane-loop';
import { type HandlerContext, Mailbox, type MailboxOwner } from '../engine/mailbox';
import { type MessageWait, messageWaits } from '../internal/message-wait';
import { textOf } from '../internal/text-of';
import { HeldRun } from './held-run';
import {
  claimTicket,
  FLUSH_AT,
  HELD_TICKET,
  RUNNING_MESSAGE,
  RUNS_STARTED,
  type ThreadInit,
  type TransferItem,
  transferListMisuse,
  transferListOf,
  WHOLE,
} from './protocol';
import {
  type ChannelSide,
  eachToMainAlone,
  readToMain,
  readToThread,
  type ThreadSide,
  writeDone,
  writeFailed,
  writeNext,
  writeWant,
} from './wire';

type HandlerFn = (message: unknown, context: HandlerContext<unknown>) => ObservableInput<unknown>;

/** A message as it waits in a thread mailbox: the id the main thread knows it by, its ticket, and the message. */
interface Envelope {
  readonly id: number;
  readonly ticket: number;
  /** Undefined while `awaitsData`. */
  message: unknown;
  /** Announced without its data (see protocol.ts): the thread asks for it once it claims the message. */
  awaitsData: boolean;
}

/** What an announced message's run receives: its data, or `NO_DATA` when none will come. */
const NO_DATA = Symbol('no data');

class ThreadMailbox extends Mailbox<Envelope, unknown, unknown> {
  /** The main thread's id of this mailbox (keys of any type map to it; a clone would lose identity). */
  id = 0;
}

/** What `early` holds for a held message released before it started again. */
const RELEASED = -2;

const port = parentPort!;
const init = workerData as ThreadInit;
/** The one lane of this thread: every mailbox placed here takes turns on it. */
const lane = new Lane(init.index, threadLoop);

/**
 * Calls the handler of message `id`, marking it in the watch memory while the call runs, so that the
 * main thread sees a handler that holds this thread (see `ThreadInit.watch`).
 */
function callWatched(
  id: number,
  fn: HandlerFn,
  message: unknown,
  context: HandlerContext<unknown>,
): ObservableInput<unknown> {
  Atomics.store(init.watch, RUNNING_MESSAGE, id);
  Atomics.add(init.watch, RUNS_STARTED, 1);
  try {
    return fn(message, context);
  } finally {
    Atomics.store(init.watch, RUNNING_MESSAGE, 0);
  }
}

/** Records for the main thread, posted together (see wire.ts). */
let outgoing: unknown[] = [];
let outgoingTransfers: TransferItem[] = [];
/** The records of `outgoing` that carry a transfer list: where each starts, and its list. */
let listed: Array<{ at: number; list: readonly TransferItem[] }> = [];
let flushQueued = false;
/** When the pending batch got its first record, and records added since its age was last checked. */
let batchStarted = 0;
let sendsSinceCheck = 0;

/**
 * When the pending batch is posted. Each post costs the main thread a wake-up and some microseconds
 * however many records it carries, time taken from the threads on a machine with few cores, so a batch
 * grows while this thread has work, and is posted:
 * - once the thread runs out of work: after every batch already waiting on its port is handled;
 * - once it is `FLUSH_AFTER_MS` old, which bounds how late an outcome is reported (and a transport
 *   acknowledges) while the thread is busy. Its age is read every `CHECK_EVERY` records.
 * A window that holds less than `FLUSH_AFTER_MS` of work per thread is refilled when a thread runs out.
 */
const FLUSH_AFTER_MS = 4;
const CHECK_EVERY = 8;

// What this thread tells the main thread: each record goes into the pending batch.

function sendNext(messageId: number, value: unknown, transfers: readonly TransferItem[] | undefined): void {
  if (transfers !== undefined) {
    listed.push({ at: outgoing.length, list: transfers });
    for (const item of transfers) outgoingTransfers.push(item);
  }
  writeNext(outgoing, messageId, value);
  sent();
}

function sendWant(messageId: number): void {
  writeWant(outgoing, messageId);
  sent();
}

function sendDone(messageId: number): void {
  writeDone(outgoing, messageId);
  sent();
}

function sendFailed(messageId: number, error: unknown): void {
  writeFailed(outgoing, messageId, error);
  sent();
}

/** A record was added to the pending batch: post it now, or see that it is posted soon. */
function sent(): void {
  if (outgoing.length >= FLUSH_AT) flush();
  else if (!flushQueued) {
    flushQueued = true;
    batchStarted = performance.now();
    // setImmediate, not a microtask: it runs after the port has delivered everything waiting, so the
    // outcomes of several incoming batches leave together.
    setImmediate(flushWhenIdle);
  } else if (++sendsSinceCheck >= CHECK_EVERY) {
    sendsSinceCheck = 0;
    if (performance.now() - batchStarted >= FLUSH_AFTER_MS) flush();
  }
}

function flushWhenIdle(): void {
  flushQueued = false;
  flush();
}

function flush(): void {
  if (outgoing.length === 0) return;
  batchStarted = performance.now();
  sendsSinceCheck = 0;
  const batch = outgoing;
  const transfers = outgoingTransfers;
  const lists = listed;
  outgoing = [];
  outgoingTransfers = [];
  listed = [];
  try {
    port.postMessage(batch, transfers as TransferListItem[]);
  } catch {
    postOneByOne(batch, lists);
  }
}

/**
 * A batch that could not be posted (a value or error that cannot be cloned, a bad transfer list):
 * each record goes on its own, and one that cannot be posted becomes the failure of its message, so
 * one bad value fails one message only and the thread lives on.
 */
function postOneByOne(
  batch: unknown[],
  lists: ReadonlyArray<{ at: number; list: readonly TransferItem[] }>,
): void {
  let nextList = 0;
  eachToMainAlone(batch, (record, at) => {
    const list = nextList < lists.length && lists[nextList].at === at ? lists[nextList++].list : [];
    try {
      port.postMessage(record, list as readonly TransferListItem[]);
    } catch (err) {
      // The record becomes its message's failure (a DONE carries nothing that could fail to clone).
      readToMain(record, {
        want: () => {},
        next: (messageId) => postFailed(messageId, 'emitted a value that cannot be cloned', err),
        done: () => {},
        failed: (messageId, error) =>
          postFailed(messageId, `failed with an error that cannot be cloned (${errorText(error)})`, err),
      });
    }
  });
}

/** Posts at once the failure of a message whose value (or error) could not cross to the main thread. */
function postFailed(messageId: number, what: string, err: unknown): void {
  const failure: unknown[] = [];
  writeFailed(
    failure,
    messageId,
    new TypeError(`thread handler ${what} to the main thread: ${errorText(err)}`),
  );
  port.postMessage(failure);
}

/** An error's message for another error's text; never throws, whatever the value is. */
function errorText(value: unknown): string {
  try {
    // A DataCloneError is a DOMException, which is not an Error here: read its fields as they are.
    const { name, message } = (value ?? {}) as { name?: unknown; message?: unknown };
    if (typeof message === 'string') return `${String(name)}: ${message}`;
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** One dispatcher as seen by this thread: owns its mailboxes here and reports their outcomes. */
class Channel implements MailboxOwner<Envelope, unknown, unknown>, ChannelSide {
  closed = false;
  readonly mailboxes = new Map<number, ThreadMailbox>();
  /** The dispatcher's ticket pages (see protocol.ts). */
  readonly pages: Int32Array[];
  /** Messages that arrived while the handler module loads, admitted in order once it has. */
  private waiting: Array<{ mailbox: number; envelope: Envelope; key: unknown }> | null = [];
  private fn: HandlerFn | null = null;
  private loadError: unknown = null;
  /** Handlers of held messages (and of messages that may be held) by message id, while they run. */
  private readonly held = new Map<number, HeldRun>();
  /**
   * RETRY (an item) or RELEASE (`RELEASED`) for a held message sent again that has not started yet:
   * applied when it starts.
   */
  private readonly early = new Map<number, number>();
  /** Runs of announced messages waiting for their data, by message id. */
  private readonly awaiting = new Map<number, (data: unknown) => void>();
  /** Waits of a traced dispatcher's messages (WAITED) until their data is here, by message id. */
  private readonly waits = new Map<number, MessageWait>();

  constructor(
    readonly throughput: number,
    moduleUrl: string,
    exportName: string,
    pages: Int32Array[],
    /** The dispatcher has a failure policy: a run that fails is held (see protocol.ts). */
    private readonly holdsFailures: boolean,
  ) {
    this.pages = pages;
    import(moduleUrl).then(
      (module) => {
        const fn = module[exportName] ?? (exportName === 'default' ? module : undefined);
        if (typeof fn === 'function') this.fn = fn;
        else
          this.loadError = new TypeError(
            `threadHandler: module ${moduleUrl} has no function export '${exportName}'`,
          );
        this.loaded();
      },
      (err) => {
        this.loadError = err;
        this.loaded();
      },
    );
  }

  private loaded(): void {
    const waiting = this.waiting ?? [];
    this.waiting = null;
    threadLoop.batchAdmissions();
    try {
      for (const { mailbox, envelope, key } of waiting) this.admit(mailbox, envelope, key);
    } finally {
      threadLoop.flushAdmissions();
    }
  }

  run(mailbox: number, messageId: number, ticket: number, key: unknown, message: unknown): void {
    if (this.waits.size !== 0) this.attachWait(messageId, message);
    this.enqueue(mailbox, { id: messageId, ticket, message, awaitsData: false }, key);
  }

  waited(messageId: number, since: number, parkedMs: number): void {
    this.waits.set(messageId, { since, parkedMs });
  }

  /** Gives the message its wait, where `tracedHandler` reads it (an object only: a primitive has no place). */
  private attachWait(messageId: number, message: unknown): void {
    const wait = this.waits.get(messageId);
    if (wait === undefined) return;
    this.waits.delete(messageId);
    if (typeof message === 'object' && message !== null) messageWaits.attach(message, wait);
  }

  announce(mailbox: number, messageId: number, ticket: number, key: unknown): void {
    this.enqueue(mailbox, { id: messageId, ticket, message: undefined, awaitsData: true }, key);
  }

  data(messageId: number, message: unknown): void {
    if (this.waits.size !== 0) this.attachWait(messageId, message);
    this.awaiting.get(messageId)?.(message);
  }

  noData(messageId: number): void {
    this.waits.delete(messageId);
    this.awaiting.get(messageId)?.(NO_DATA);
  }

  private enqueue(mailbox: number, envelope: Envelope, key: unknown): void {
    if (this.waiting !== null) this.waiting.push({ mailbox, envelope, key });
    else this.admit(mailbox, envelope, key);
  }

  /** Puts a message into its key's mailbox (opened here for its first), once the module has loaded. */
  private admit(mailboxId: number, envelope: Envelope, key: unknown): void {
    if (this.closed) return;
    if (this.loadError !== null) {
      if (this.claim(envelope)) sendFailed(envelope.id, this.loadError);
      return;
    }
    let mailbox = this.mailboxes.get(mailboxId);
    if (mailbox === undefined) {
      mailbox = new ThreadMailbox().open(key, lane, this);
      mailbox.id = mailboxId;
      this.mailboxes.set(mailbox.id, mailbox);
    }
    mailbox.post(envelope);
  }

  /** PAGE: one more ticket page. */
  page(page: Int32Array): void {
    this.pages.push(page);
  }

  /** RETRY: a held message runs again (see `HeldRun`). */
  retry(messageId: number, item: number): void {
    const run = this.held.get(messageId);
    // A handler that could not load held nothing: each run fails as the first did.
    if (this.loadError !== null) sendFailed(messageId, this.loadError);
    else if (run !== undefined) run.retry(item);
    else this.early.set(messageId, item);
  }

  /** RELEASE: a held message is done; its key goes on. */
  release(messageId: number): void {
    if (this.loadError !== null) return;
    const run = this.held.get(messageId);
    if (run !== undefined) run.release();
    else this.early.set(messageId, RELEASED);
  }

  close(): void {
    this.closed = true;
    this.waiting = null;
    this.waits.clear();
    for (const mailbox of this.mailboxes.values()) {
      try {
        mailbox.cancel();
      } catch {
        // A handler's teardown threw after its dispatcher ended: nobody is left to tell, and it must not
        // take the thread (and the other dispatchers' keys on it) down.
      }
    }
    this.mailboxes.clear();
  }

  // MailboxOwner: the engine's mailboxes report here; the main thread decides what outcomes mean.
  claim(envelope: Envelope): boolean {
    // A held message sent again had started before: there is nothing to claim.
    return envelope.ticket === HELD_TICKET || claimTicket(this.pages, envelope.ticket, envelope.id);
  }

  handle(envelope: Envelope, context: HandlerContext<unknown>): ObservableInput<unknown> {
    if (envelope.awaitsData) return this.afterData(envelope, context);
    const fn = this.fn as HandlerFn;
    const { id } = envelope;
    if (!this.holdsFailures) return callWatched(id, fn, envelope.message, context);
    return new Observable<unknown>((subscriber) => {
      const startsHeld = envelope.ticket === HELD_TICKET;
      const run = new HeldRun(
        (message, context) => callWatched(id, fn, message, context),
        envelope.message,
        context,
        subscriber,
        (failed, error) => (failed ? sendFailed(id, error) : sendDone(id)),
        startsHeld,
      );
      this.held.set(id, run);
      if (!startsHeld) run.start(WHOLE);
      else {
        const early = this.early.get(id);
        this.early.delete(id);
        if (early === RELEASED) run.release();
        else if (early !== undefined) run.retry(early);
      }
      return () => {
        run.cancel();
        this.held.delete(id);
      };
    });
  }

  /**
   * The run of an announced message, claimed now: asks the main thread for its data, and runs its handler
   * once the data is here. No data (the main thread failed the message) ends the run, unreported.
   */
  private afterData(envelope: Envelope, context: HandlerContext<unknown>): Observable<unknown> {
    return new Observable<unknown>((subscriber) => {
      let run: Subscription | null = null;
      this.awaiting.set(envelope.id, (data) => {
        this.awaiting.delete(envelope.id);
        if (data === NO_DATA) {
          subscriber.complete();
          return;
        }
        envelope.message = data;
        envelope.awaitsData = false;
        let input: ObservableInput<unknown>;
        try {
          input = this.handle(envelope, context);
        } catch (err) {
          // A handler that throws fails its message as in the mailbox.
          subscriber.error(err);
          return;
        }
        run = followResult(input, context.key, {
          resolved: (value) => {
            subscriber.next(value);
            subscriber.complete();
          },
          rejected: (err) => subscriber.error(err),
          observer: () => subscriber,
        });
      });
      sendWant(envelope.id);
      return () => {
        this.awaiting.delete(envelope.id);
        run?.unsubscribe();
      };
    });
  }

  emit(value: unknown, mailbox: Mailbox<Envelope, unknown, unknown>): void {
    const id = (mailbox.current as Envelope).id;
    const list = transferListOf(value);
    const misuse = list && transferListMisuse(list, outgoingTransfers);
    if (misuse)
      sendFailed(id, new TypeError(`a value of the handler for key ${textOf(mailbox.key)} ${misuse}`));
    else sendNext(id, value, list);
  }

  done(_mailbox: Mailbox<Envelope, unknown, unknown>, envelope: Envelope): void {
    sendDone(envelope.id);
  }

  failed(_mailbox: Mailbox<Envelope, unknown, unknown>, envelope: Envelope, error: unknown): void {
    sendFailed(envelope.id, error);
  }

  retire(mailbox: Mailbox<Envelope, unknown, unknown>): void {
    this.mailboxes.delete((mailbox as ThreadMailbox).id);
  }
}

const channels = new Map<number, Channel>();

/** What this thread does with the main thread's records. */
const fromMain: ThreadSide = {
  open(channel, moduleUrl, exportName, throughput, pages, holdsFailures) {
    channels.set(channel, new Channel(throughput, moduleUrl, exportName, pages, holdsFailures));
  },
  channel: (channel) => channels.get(channel),
  close(channel) {
    channels.get(channel)?.close();
    channels.delete(channel);
  },
  stop() {
    // Unsubscribe every running handler (their teardown runs), then end the thread even if a
    // handler left timers behind.
    for (const channel of channels.values()) channel.close();
    channels.clear();
    process.exit(0);
  },
};

port.on('message', (batch: unknown[]) => {
  threadLoop.batchAdmissions();
  try {
    readToThread(batch, fromMain);
  } finally {
    threadLoop.flushAdmissions();
  }
});
