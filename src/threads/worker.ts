/**
 * The entry of a thread lane. It runs the same engine as event-loop lanes (mailboxes with fair turns on
 * a lane loop, async handlers releasing the lane), with one lane per thread; the main thread keeps the
 * window, the key → thread pinning and the output. Imports only the engine, rxjs and the protocol.
 */
import { parentPort, type TransferListItem, workerData } from 'node:worker_threads';
import { Observable, type ObservableInput } from 'rxjs';
import { Lane } from '../engine/lane';
import { threadLoop } from '../engine/lane-loop';
import { type HandlerContext, Mailbox, type MailboxOwner } from '../engine/mailbox';
import { textOf } from '../internal/text-of';
import { HeldRun } from './held-run';
import {
  CLOSE_FIELDS,
  claimTicket,
  FLUSH_AT,
  HELD_TICKET,
  OPEN_FIELDS,
  PAGE_FIELDS,
  RELEASE_FIELDS,
  RETRY_FIELDS,
  RUN_HEADER_FIELDS,
  RUN_MESSAGE_FIELDS,
  type ThreadInit,
  ToMain,
  ToThread,
  type TransferItem,
  transferListMisuse,
  transferListOf,
  WHOLE,
} from './protocol';

type HandlerFn = (message: unknown, context: HandlerContext<unknown>) => ObservableInput<unknown>;

/** A message as it waits in a thread mailbox: the id the main thread knows it by, its ticket, and the message. */
interface Envelope {
  readonly id: number;
  readonly ticket: number;
  readonly message: unknown;
}

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

/** Records for the main thread, posted together (see protocol.ts). */
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

function send(op: ToMain, id: number, value?: unknown, transfers?: readonly TransferItem[]): void {
  if (transfers !== undefined) {
    listed.push({ at: outgoing.length, list: transfers });
    for (const item of transfers) outgoingTransfers.push(item);
  }
  if (op === ToMain.Done) outgoing.push(op, id);
  else outgoing.push(op, id, value);
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
  for (let i = 0; i < batch.length; ) {
    const op = batch[i] as ToMain;
    const width = op === ToMain.Done ? 2 : 3;
    const list = nextList < lists.length && lists[nextList].at === i ? lists[nextList++].list : [];
    try {
      port.postMessage(batch.slice(i, i + width), list as readonly TransferListItem[]);
    } catch (err) {
      port.postMessage([ToMain.Failed, batch[i + 1], notCloneable(op, batch[i + 2], err)]);
    }
    i += width;
  }
}

/** The failure of a message whose value (or error) could not cross to the main thread. */
function notCloneable(op: ToMain, value: unknown, err: unknown): TypeError {
  const what =
    op === ToMain.Next
      ? 'emitted a value that cannot be cloned to the main thread'
      : `failed with an error that cannot be cloned to the main thread (${errorText(value)})`;
  return new TypeError(`thread handler ${what}: ${errorText(err)}`);
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
class Channel implements MailboxOwner<Envelope, unknown, unknown> {
  closed = false;
  readonly mailboxes = new Map<number, ThreadMailbox>();
  /** The dispatcher's ticket pages (see protocol.ts). */
  readonly pages: Int32Array[];
  /** RUN operations that arrived while the handler module loads, admitted in order once it has. */
  private waiting: unknown[] | null = [];
  private fn: HandlerFn | null = null;
  private loadError: unknown = null;
  /** Handlers of held messages (and of messages that may be held) by message id, while they run. */
  private readonly held = new Map<number, HeldRun>();
  /**
   * RETRY (an item) or RELEASE (`RELEASED`) for a held message sent again that has not started yet:
   * applied when it starts.
   */
  private readonly early = new Map<number, number>();

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
    threadLoop.hold();
    try {
      for (let i = 0; i < waiting.length; i += RUN_MESSAGE_FIELDS)
        this.run(waiting[i], waiting[i + 1], waiting[i + 2], waiting[i + 3], waiting[i + 4]);
    } finally {
      threadLoop.release();
    }
  }

  run(mailboxId: unknown, messageId: unknown, ticket: unknown, key: unknown, message: unknown): void {
    if (this.closed) return;
    if (this.waiting !== null) {
      this.waiting.push(mailboxId, messageId, ticket, key, message);
      return;
    }
    if (this.loadError !== null) {
      if (this.claim({ id: messageId as number, ticket: ticket as number, message }))
        send(ToMain.Failed, messageId as number, this.loadError);
      return;
    }
    let mailbox = this.mailboxes.get(mailboxId as number);
    if (mailbox === undefined) {
      mailbox = new ThreadMailbox().open(key, lane, this);
      mailbox.id = mailboxId as number;
      this.mailboxes.set(mailbox.id, mailbox);
    }
    mailbox.post({ id: messageId as number, ticket: ticket as number, message });
  }

  /** RETRY: a held message runs again (see `HeldRun`). */
  retry(messageId: number, item: number): void {
    const run = this.held.get(messageId);
    if (run !== undefined) run.retry(item);
    else this.early.set(messageId, item);
  }

  /** RELEASE: a held message is done; its key goes on. */
  release(messageId: number): void {
    const run = this.held.get(messageId);
    if (run !== undefined) run.release();
    else this.early.set(messageId, RELEASED);
  }

  close(): void {
    this.closed = true;
    this.waiting = null;
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
    if (!this.holdsFailures) return (this.fn as HandlerFn)(envelope.message, context);
    return new Observable<unknown>((subscriber) => {
      const { id } = envelope;
      const startsHeld = envelope.ticket === HELD_TICKET;
      const run = new HeldRun(
        this.fn as HandlerFn,
        envelope.message,
        context,
        subscriber,
        (failed, error) => (failed ? send(ToMain.Failed, id, error) : send(ToMain.Done, id)),
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

  emit(value: unknown, mailbox: Mailbox<Envelope, unknown, unknown>): void {
    const id = (mailbox.current as Envelope).id;
    const list = transferListOf(value);
    const misuse = list && transferListMisuse(list, outgoingTransfers);
    if (misuse)
      send(
        ToMain.Failed,
        id,
        new TypeError(`a value of the handler for key ${textOf(mailbox.key)} ${misuse}`),
      );
    else send(ToMain.Next, id, value, list);
  }

  done(_mailbox: Mailbox<Envelope, unknown, unknown>, envelope: Envelope): void {
    send(ToMain.Done, envelope.id);
  }

  failed(_mailbox: Mailbox<Envelope, unknown, unknown>, envelope: Envelope, error: unknown): void {
    send(ToMain.Failed, envelope.id, error);
  }

  retire(mailbox: Mailbox<Envelope, unknown, unknown>): void {
    this.mailboxes.delete((mailbox as ThreadMailbox).id);
  }
}

const channels = new Map<number, Channel>();

port.on('message', (batch: unknown[]) => {
  threadLoop.hold();
  try {
    for (let i = 0; i < batch.length; ) {
      const op = batch[i] as ToThread;
      if (op === ToThread.Run) {
        const channel = channels.get(batch[i + 1] as number);
        const end = i + 1 + RUN_HEADER_FIELDS + (batch[i + 2] as number) * RUN_MESSAGE_FIELDS;
        i += 1 + RUN_HEADER_FIELDS;
        if (channel !== undefined) {
          for (; i < end; i += RUN_MESSAGE_FIELDS)
            channel.run(batch[i], batch[i + 1], batch[i + 2], batch[i + 3], batch[i + 4]);
        }
        i = end;
      } else if (op === ToThread.Open) {
        const id = batch[i + 1] as number;
        const pages = batch[i + 5] as Int32Array[];
        channels.set(
          id,
          new Channel(
            batch[i + 4] as number,
            batch[i + 2] as string,
            batch[i + 3] as string,
            pages,
            batch[i + 6] as boolean,
          ),
        );
        i += 1 + OPEN_FIELDS;
      } else if (op === ToThread.Retry) {
        channels.get(batch[i + 1] as number)?.retry(batch[i + 2] as number, batch[i + 3] as number);
        i += 1 + RETRY_FIELDS;
      } else if (op === ToThread.Release) {
        channels.get(batch[i + 1] as number)?.release(batch[i + 2] as number);
        i += 1 + RELEASE_FIELDS;
      } else if (op === ToThread.Page) {
        channels.get(batch[i + 1] as number)?.pages.push(batch[i + 2] as Int32Array);
        i += 1 + PAGE_FIELDS;
      } else if (op === ToThread.Close) {
        const id = batch[i + 1] as number;
        channels.get(id)?.close();
        channels.delete(id);
        i += 1 + CLOSE_FIELDS;
      } else {
        // Unsubscribe every running handler (their teardown runs), then end the thread even if a
        // handler left timers behind.
        for (const channel of channels.values()) channel.close();
        channels.clear();
        process.exit(0);
      }
    }
  } finally {
    threadLoop.release();
  }
});
