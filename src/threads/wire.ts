/**
 * The records of the thread protocol (see protocol.ts), written and read here only, by name, for both
 * sides. A batch stays a flat array of primitives, the cheapest shape for structured clone: each record
 * is an op code followed by its fields, in the order the writers below take them.
 *
 * Main → thread:
 *   OPEN    channel, moduleUrl, exportName,            a dispatcher's first message to this thread,
 *             throughput, ticket pages, holds failures with its ticket pages so far
 *   PAGE    channel, ticket page                       one more ticket page of a dispatcher
 *   RUN     channel, count, then `count` times:        messages of one dispatcher, each into a mailbox
 *             mailbox, message id, ticket, key, message (per-dispatcher mailbox id)
 *   ANNOUNCE channel, mailbox, message id, ticket, key  a message with a transfer list, without its data:
 *                                                      the thread asks for it (WANT) once it claims it
 *   DATA    channel, message id, message               an announced message's data, its list transferred
 *   NO_DATA channel, message id                        an announced message's data cannot come (the
 *                                                      main thread failed it): its run ends unreported
 *   WAITED  channel, message id, since, parked ms      how long the next RUN or ANNOUNCE of the message
 *                                                      waited before posting, for tracing (`MessageWait`);
 *                                                      written for traced dispatchers only
 *   RETRY   channel, message id, item                  run a held message again
 *   RELEASE channel, message id                        a held message is done: its key goes on
 *   CLOSE   channel                                    the dispatcher ended: cancel and forget it
 *   STOP                                               the executor closes: cancel everything and exit
 *
 * Consecutive messages of one dispatcher share one RUN header: cloning costs per entry, and the op code
 * and channel repeated for every message would make the main thread's posts much costlier.
 *
 * Thread → main:
 *   WANT    message id                                 an announced message was claimed: send its data
 *   NEXT    message id, value                          the message's handler emitted a value
 *   DONE    message id                                 a handler completed
 *   FAILED  message id, error                          a handler threw or errored (or could not be
 *                                                      loaded, or one of its values could not be cloned)
 */

// Op codes: both sides read them from this file, so their values need not be spelled out.
enum ToThread {
  Open,
  Run,
  Close,
  Stop,
  Page,
  Retry,
  Release,
  Announce,
  Data,
  NoData,
  Waited,
}

enum ToMain {
  Want,
  Next,
  Done,
  Failed,
}

/** OPEN's fields. */
type OpenFields = [
  channel: number,
  moduleUrl: string,
  exportName: string,
  throughput: number,
  pages: Int32Array[],
  holdsFailures: boolean,
];

/** What a thread does with the records of the main thread. */
export interface ThreadSide {
  /** OPEN: a dispatcher starts on this thread. */
  open(...fields: OpenFields): void;
  /** The dispatcher `channel` names, or undefined when it is unknown here (closed): its records are dropped. */
  channel(channel: number): ChannelSide | undefined;
  /** CLOSE: the dispatcher ended. */
  close(channel: number): void;
  /** STOP: the executor closes. */
  stop(): void;
}

/** What a thread does with the records of one dispatcher. */
export interface ChannelSide {
  /** One message of a RUN. */
  run(mailbox: number, messageId: number, ticket: number, key: unknown, message: unknown): void;
  /** ANNOUNCE: a message whose data follows once it is claimed (WANT, then DATA or NO_DATA). */
  announce(mailbox: number, messageId: number, ticket: number, key: unknown): void;
  /** DATA: the data of an announced message. */
  data(messageId: number, message: unknown): void;
  /** NO_DATA: an announced message's data cannot come. */
  noData(messageId: number): void;
  /** WAITED: the wait of a message whose RUN or ANNOUNCE follows. */
  waited(messageId: number, since: number, parkedMs: number): void;
  /** PAGE: one more ticket page. */
  page(page: Int32Array): void;
  /** RETRY: a held message runs again, itself or item `item` of it. */
  retry(messageId: number, item: number): void;
  /** RELEASE: a held message is done. */
  release(messageId: number): void;
}

/** What the main thread does with the records of a thread. */
export interface MainSide {
  /** WANT: the thread claimed the announced message `messageId` and waits for its data. */
  want(messageId: number): void;
  /** NEXT: the handler of `messageId` emitted `value`. */
  next(messageId: number, value: unknown): void;
  /** DONE: the handler of `messageId` completed. */
  done(messageId: number): void;
  /** FAILED: the handler of `messageId` failed with `error`. */
  failed(messageId: number, error: unknown): void;
}

// Main → thread: writers.

export function writeOpen(batch: unknown[], ...fields: OpenFields): void {
  batch.push(ToThread.Open, ...fields);
}

export function writePage(batch: unknown[], channel: number, page: Int32Array): void {
  batch.push(ToThread.Page, channel, page);
}

/** Starts a RUN of `channel` with no message yet; returns where its count is, for `addToRun`. */
export function writeRun(batch: unknown[], channel: number): number {
  batch.push(ToThread.Run, channel, 0);
  return batch.length - 1;
}

/** Adds one message to the RUN whose count is at `countAt` (the RUN must end the batch). */
export function addToRun(
  batch: unknown[],
  countAt: number,
  mailbox: number,
  messageId: number,
  ticket: number,
  key: unknown,
  message: unknown,
): void {
  (batch[countAt] as number)++;
  batch.push(mailbox, messageId, ticket, key, message);
}

export function writeAnnounce(
  batch: unknown[],
  channel: number,
  mailbox: number,
  messageId: number,
  ticket: number,
  key: unknown,
): void {
  batch.push(ToThread.Announce, channel, mailbox, messageId, ticket, key);
}

export function writeData(batch: unknown[], channel: number, messageId: number, message: unknown): void {
  batch.push(ToThread.Data, channel, messageId, message);
}

export function writeNoData(batch: unknown[], channel: number, messageId: number): void {
  batch.push(ToThread.NoData, channel, messageId);
}

export function writeWaited(
  batch: unknown[],
  channel: number,
  messageId: number,
  since: number,
  parkedMs: number,
): void {
  batch.push(ToThread.Waited, channel, messageId, since, parkedMs);
}

export function writeRetry(batch: unknown[], channel: number, messageId: number, item: number): void {
  batch.push(ToThread.Retry, channel, messageId, item);
}

export function writeRelease(batch: unknown[], channel: number, messageId: number): void {
  batch.push(ToThread.Release, channel, messageId);
}

export function writeClose(batch: unknown[], channel: number): void {
  batch.push(ToThread.Close, channel);
}

export function writeStop(batch: unknown[]): void {
  batch.push(ToThread.Stop);
}

// Main → thread: readers.

/** Fields of each message of a RUN. */
const RUN_MESSAGE = 5;

/** Hands each record of a batch from the main thread to `side`, in order. */
export function readToThread(batch: readonly unknown[], side: ThreadSide): void {
  for (let i = 0; i < batch.length; ) {
    const op = batch[i] as ToThread;
    if (op === ToThread.Run) {
      const channel = side.channel(batch[i + 1] as number);
      const end = i + 3 + (batch[i + 2] as number) * RUN_MESSAGE;
      if (channel !== undefined) {
        for (let m = i + 3; m < end; m += RUN_MESSAGE) {
          channel.run(
            batch[m] as number,
            batch[m + 1] as number,
            batch[m + 2] as number,
            batch[m + 3],
            batch[m + 4],
          );
        }
      }
      i = end;
      continue;
    }
    if (op === ToThread.Open) {
      side.open(
        batch[i + 1] as number,
        batch[i + 2] as string,
        batch[i + 3] as string,
        batch[i + 4] as number,
        batch[i + 5] as Int32Array[],
        batch[i + 6] as boolean,
      );
    } else if (op === ToThread.Announce) {
      side
        .channel(batch[i + 1] as number)
        ?.announce(batch[i + 2] as number, batch[i + 3] as number, batch[i + 4] as number, batch[i + 5]);
    } else if (op === ToThread.Data) {
      side.channel(batch[i + 1] as number)?.data(batch[i + 2] as number, batch[i + 3]);
    } else if (op === ToThread.NoData) {
      side.channel(batch[i + 1] as number)?.noData(batch[i + 2] as number);
    } else if (op === ToThread.Waited) {
      side
        .channel(batch[i + 1] as number)
        ?.waited(batch[i + 2] as number, batch[i + 3] as number, batch[i + 4] as number);
    } else if (op === ToThread.Retry) {
      side.channel(batch[i + 1] as number)?.retry(batch[i + 2] as number, batch[i + 3] as number);
    } else if (op === ToThread.Release) {
      side.channel(batch[i + 1] as number)?.release(batch[i + 2] as number);
    } else if (op === ToThread.Page) {
      side.channel(batch[i + 1] as number)?.page(batch[i + 2] as Int32Array);
    } else if (op === ToThread.Close) {
      side.close(batch[i + 1] as number);
    } else {
      side.stop();
    }
    i += 1 + toThreadFields(op);
  }
}

/**
 * The message a record posted alone is about, and what of it the record carries: all of it (RUN), its
 * ticket only (ANNOUNCE) or its data only (DATA). Undefined for records about no message.
 */
export type RecordOfMessage = { messageId: number; part: 'whole' | 'ticket' | 'data' } | undefined;

/**
 * Each record of a batch for a thread as a batch of its own, a RUN split into one per message, with the
 * message it concerns (undefined for records of no message): for posting one by one a batch that cannot
 * be cloned.
 */
export function eachToThreadAlone(
  batch: readonly unknown[],
  each: (record: unknown[], of: RecordOfMessage) => void,
): void {
  for (let i = 0; i < batch.length; ) {
    const op = batch[i] as ToThread;
    if (op !== ToThread.Run) {
      const width = 1 + toThreadFields(op);
      const record = batch.slice(i, i + width);
      if (op === ToThread.Announce) each(record, { messageId: record[3] as number, part: 'ticket' });
      else if (op === ToThread.Data) each(record, { messageId: record[2] as number, part: 'data' });
      else each(record, undefined);
      i += width;
      continue;
    }
    const channel = batch[i + 1];
    const end = i + 3 + (batch[i + 2] as number) * RUN_MESSAGE;
    for (let m = i + 3; m < end; m += RUN_MESSAGE)
      each([ToThread.Run, channel, 1, ...batch.slice(m, m + RUN_MESSAGE)], {
        messageId: batch[m + 1] as number,
        part: 'whole',
      });
    i = end;
  }
}

/** Fields after the op code of a record other than RUN. */
function toThreadFields(op: ToThread): number {
  if (op === ToThread.Open) return 6;
  if (op === ToThread.Announce) return 5;
  if (op === ToThread.Waited) return 4;
  if (op === ToThread.Retry || op === ToThread.Data) return 3;
  if (op === ToThread.Page || op === ToThread.Release || op === ToThread.NoData) return 2;
  return op === ToThread.Close ? 1 : 0;
}

// Thread → main: writers.

export function writeWant(batch: unknown[], messageId: number): void {
  batch.push(ToMain.Want, messageId);
}

export function writeNext(batch: unknown[], messageId: number, value: unknown): void {
  batch.push(ToMain.Next, messageId, value);
}

export function writeDone(batch: unknown[], messageId: number): void {
  batch.push(ToMain.Done, messageId);
}

export function writeFailed(batch: unknown[], messageId: number, error: unknown): void {
  batch.push(ToMain.Failed, messageId, error);
}

// Thread → main: readers.

/** Hands each record of a batch from a thread to `side`, in order. */
export function readToMain(batch: readonly unknown[], side: MainSide): void {
  for (let i = 0; i < batch.length; ) {
    const op = batch[i] as ToMain;
    if (op === ToMain.Next) side.next(batch[i + 1] as number, batch[i + 2]);
    else if (op === ToMain.Done) side.done(batch[i + 1] as number);
    else if (op === ToMain.Want) side.want(batch[i + 1] as number);
    else side.failed(batch[i + 1] as number, batch[i + 2]);
    i += 1 + toMainFields(op);
  }
}

/**
 * Each record of a batch for the main thread as a batch of its own, with where it starts in `batch`:
 * for posting one by one a batch that cannot be cloned.
 */
export function eachToMainAlone(
  batch: readonly unknown[],
  each: (record: unknown[], at: number) => void,
): void {
  for (let i = 0; i < batch.length; ) {
    const width = 1 + toMainFields(batch[i] as ToMain);
    each(batch.slice(i, i + width), i);
    i += width;
  }
}

/** Fields after the op code of a record to the main thread. */
function toMainFields(op: ToMain): number {
  return op === ToMain.Done || op === ToMain.Want ? 1 : 2;
}
