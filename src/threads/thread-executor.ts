import { availableParallelism } from 'node:os';
import { type ResourceLimits, Worker } from 'node:worker_threads';
import { type ExecutorClient, KeyedExecutorClosedError } from '../executor';
import { describe, integerOption } from '../options';
import { ThreadCrashLoopError, ThreadExitedError } from './errors';
import type { ThreadHandler } from './handler';
import {
  CLOSE_FIELDS,
  OPEN_FIELDS,
  RUN_HEADER_FIELDS,
  RUN_MESSAGE_FIELDS,
  STOP_FIELDS,
  type ThreadInit,
  ToMain,
  ToThread,
} from './protocol';
import { ThreadSlot } from './thread-slot';
import { threadWorkerEntry } from './worker-entry';

/** Options of `ThreadExecutor`. */
export interface ThreadExecutorOptions {
  /** Worker threads shared by every dispatcher given this executor. Integer ≥ 1. Default: available processors. */
  workers?: number;
  /** V8 heap limits of each thread (`worker_threads` `resourceLimits`); a thread that exceeds them dies and is replaced. Default: Node's. */
  resourceLimits?: ResourceLimits;
  /**
   * Times each thread lane may have its thread replaced within any minute. A death beyond that fails
   * the messages the thread held with `ThreadCrashLoopError` instead of running them again, and the
   * lane stays down until the minute has passed. Each lane has its own budget, so a crash loop on one
   * lane never costs another lane its replacement. Integer ≥ 0. Default 5.
   */
  maxRespawnsPerMinute?: number;
}

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
  readonly key: unknown;
  readonly message: unknown;
}

/** A dispatcher as a thread executor sees it. */
export interface ThreadClient {
  /** Set by `attach`: names the dispatcher in the protocol. */
  channel: number;
  readonly handler: ThreadHandler<unknown, unknown>;
  readonly throughput: number;
  emit(value: unknown): void;
  /** The message's handler finished in its thread: completed when `failed` is false. */
  finished(posted: PostedMessage, failed: boolean, error?: unknown): void;
  terminate(error: unknown): void;
}

const MINUTE_MS = 60_000;

let shared: ThreadExecutor | undefined;

/**
 * Thread lanes: N `worker_threads` shared by every dispatcher given this executor, for CPU-bound
 * handlers. Semantics are those of event-loop lanes: each key's mailbox lives in one thread while it
 * has unfinished messages, and inside a thread mailboxes take fair turns and async handlers release
 * the thread (the same engine runs there). The main thread keeps the window, the key → thread pinning,
 * settlement and output.
 *
 * Placement of a new key: a parked thread (no unfinished messages), scanning round-robin, else the
 * least loaded thread (fewest unfinished messages, then fewest pinned keys). The event-loop rule "the
 * lane running now" has no equivalent: admission runs on the main thread, never inside a thread lane.
 *
 * A thread that dies (`process.exit`, an uncaught error, `resourceLimits`) is replaced at once, and
 * every message it held runs again on the replacement, in the order it was first posted — so per-key
 * order holds, and delivery for those messages is at-least-once (values they had already emitted may
 * be emitted again). Keys on other threads are not touched. Beyond `maxRespawnsPerMinute` (per lane), the held
 * messages fail with `ThreadCrashLoopError` instead (a poison message cannot loop), and so do held
 * messages whose buffers were transferred (`ThreadExitedError`).
 *
 * Threads start with the first message and hold the process open only while they hold unfinished
 * messages. `close()` cancels (see there). `ThreadExecutor.shared` also stops its threads whenever no
 * dispatcher is running on it.
 */
export class ThreadExecutor {
  /** The process-wide thread executor used for a thread handler given no executor. Never keeps the process alive; cannot be closed. */
  static get shared(): ThreadExecutor {
    shared ??= new ThreadExecutor({}, true);
    return shared;
  }

  readonly workers: number;
  private readonly slots: ThreadSlot[];
  private readonly resourceLimits: ResourceLimits | undefined;
  private readonly maxRespawnsPerMinute: number;
  /** Running dispatchers by channel: values coming back name their channel. */
  private readonly clients = new Map<number, ThreadClient>();
  /** Messages posted and not finished, by id; insertion order is posting order (replayed after a crash). */
  private readonly posted = new Map<number, PostedMessage>();
  private nextChannel = 0;
  private nextMessageId = 0;
  /** Where the round-robin scan for a parked thread starts next. */
  private parkedCursor = 0;
  private isClosed = false;

  constructor(
    options: ThreadExecutorOptions = {},
    private readonly isShared = false,
  ) {
    this.workers = integerOption('ThreadExecutor', 'workers', options.workers, availableParallelism(), 1);
    this.maxRespawnsPerMinute = integerOption(
      'ThreadExecutor',
      'maxRespawnsPerMinute',
      options.maxRespawnsPerMinute,
      5,
      0,
    );
    if (
      options.resourceLimits !== undefined &&
      (options.resourceLimits === null || typeof options.resourceLimits !== 'object')
    ) {
      throw new TypeError(
        `ThreadExecutor: expected \`resourceLimits\` to be an object, got ${describe(options.resourceLimits)}`,
      );
    }
    this.resourceLimits = options.resourceLimits;
    this.slots = Array.from(
      { length: this.workers },
      (_, i) => new ThreadSlot(i, (slot, ops) => this.postSeparately(slot, ops)),
    );
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

  /** @internal Only a `ThreadDispatcher` attaches here: `keyedDispatch` checks that handler and executor match. */
  attach(dispatcher: ExecutorClient): void {
    if (this.isClosed) throw new KeyedExecutorClosedError();
    const client = dispatcher as ThreadClient;
    client.channel = ++this.nextChannel;
    this.clients.set(client.channel, client);
  }

  /** @internal The dispatcher ended: forget its messages and cancel what its threads still run for it. */
  detach(dispatcher: ExecutorClient): void {
    const client = dispatcher as ThreadClient;
    if (!this.clients.delete(client.channel)) return;
    for (const [id, posted] of this.posted) {
      if (posted.client !== client) continue;
      this.posted.delete(id);
      posted.placement.slot.letGo();
    }
    for (const slot of this.slots) {
      if (slot.opened.delete(client.channel)) slot.push(ToThread.Close, client.channel);
    }
    if (this.isShared && this.clients.size === 0) void this.stopThreads(false);
  }

  /** @internal The thread a new key is pinned to (see the class comment), or null when all are down. */
  pickThread(): ThreadSlot | null {
    const slots = this.slots;
    const n = slots.length;
    for (let i = 0; i < n; i++) {
      const slot = slots[(this.parkedCursor + i) % n];
      if (slot.parked) {
        this.parkedCursor = (slot.index + 1) % n;
        return slot;
      }
    }
    let best: ThreadSlot | null = null;
    for (const slot of slots) {
      if (slot.down) continue;
      if (
        best === null ||
        slot.unfinished < best.unfinished ||
        (slot.unfinished === best.unfinished && slot.pinned < best.pinned)
      ) {
        best = slot;
      }
    }
    return best;
  }

  /** @internal Posts one admitted message to the thread of its key (batched; see protocol.ts). */
  post(client: ThreadClient, placement: KeyPlacement, key: unknown, message: unknown): void {
    const posted: PostedMessage = { id: ++this.nextMessageId, client, placement, key, message };
    this.posted.set(posted.id, posted);
    placement.slot.hold();
    this.send(posted);
  }

  private send(posted: PostedMessage): void {
    const { client, placement } = posted;
    const slot = placement.slot;
    if (slot.worker === null) this.spawn(slot);
    if (!slot.opened.has(client.channel)) {
      slot.opened.add(client.channel);
      const { moduleUrl, exportName } = client.handler;
      slot.push(ToThread.Open, client.channel, moduleUrl, exportName, client.throughput);
    }
    const transfer = client.handler.transfer;
    if (transfer !== undefined) slot.addTransfers(transfer(posted.message));
    slot.pushRun(client.channel, placement.mailboxId, posted.id, posted.key, posted.message);
  }

  private spawn(slot: ThreadSlot): void {
    const init: ThreadInit = { index: slot.index };
    const worker = new Worker(threadWorkerEntry(), { workerData: init, resourceLimits: this.resourceLimits });
    slot.worker = worker;
    slot.opened.clear();
    if (slot.unfinished === 0) worker.unref();
    let lastError: unknown;
    worker.on('message', (batch: unknown[]) => this.receive(batch));
    worker.on('error', (err) => {
      lastError = err;
    });
    worker.on('exit', (code) => {
      if (slot.worker === worker) this.died(slot, code, lastError);
    });
  }

  /** Values and outcomes coming back from a thread (see protocol.ts). */
  private receive(batch: unknown[]): void {
    for (let i = 0; i < batch.length; ) {
      const op = batch[i] as ToMain;
      if (op === ToMain.Next) {
        this.clients.get(batch[i + 1] as number)?.emit(batch[i + 2]);
        i += 3;
      } else if (op === ToMain.Done) {
        this.finish(batch[i + 1] as number, false, undefined);
        i += 2;
      } else {
        this.finish(batch[i + 1] as number, true, batch[i + 2]);
        i += 3;
      }
    }
  }

  private finish(id: number, failed: boolean, error: unknown): void {
    const posted = this.posted.get(id);
    if (posted === undefined) return; // its dispatcher ended, or it ran on a thread that has since died
    this.posted.delete(id);
    posted.placement.slot.letGo();
    posted.client.finished(posted, failed, error);
  }

  /** A thread died on its own: replace it and run its messages again, or fail them past the rate limit. */
  private died(slot: ThreadSlot, exitCode: number, error: unknown): void {
    slot.worker = null;
    slot.opened.clear();
    slot.dropPending();
    const held: PostedMessage[] = [];
    for (const posted of this.posted.values()) if (posted.placement.slot === slot) held.push(posted);
    const now = Date.now();
    slot.respawnTimes = slot.respawnTimes.filter((t) => now - t < MINUTE_MS);
    if (slot.respawnTimes.length < this.maxRespawnsPerMinute) {
      slot.respawnTimes.push(now);
      if (held.length > 0) this.spawn(slot);
      for (const posted of held) {
        if (posted.client.handler.transfer === undefined) this.send(posted);
        else this.failHeld(posted, new ThreadExitedError(slot.index, exitCode, error));
      }
      return;
    }
    slot.down = true;
    const retryAt = (slot.respawnTimes[0] ?? now) + MINUTE_MS;
    setTimeout(() => {
      slot.down = false;
    }, retryAt - now).unref();
    const crashLoop = new ThreadCrashLoopError(slot.index, exitCode, error, this.maxRespawnsPerMinute);
    for (const posted of held) this.failHeld(posted, crashLoop);
  }

  private failHeld(posted: PostedMessage, error: unknown): void {
    if (this.posted.get(posted.id) !== posted) return; // its dispatcher ended meanwhile
    this.posted.delete(posted.id);
    posted.placement.slot.letGo();
    posted.client.finished(posted, true, error);
  }

  /**
   * A batch failed to clone: post its operations one by one, each message in a RUN of its own, failing
   * only the messages that cannot be cloned.
   */
  private postSeparately(slot: ThreadSlot, ops: unknown[]): void {
    const worker = slot.worker;
    for (let i = 0; i < ops.length && worker !== null; ) {
      const op = ops[i] as ToThread;
      if (op !== ToThread.Run) {
        const width = 1 + fieldsOf(op);
        worker.postMessage(ops.slice(i, i + width));
        i += width;
        continue;
      }
      const channel = ops[i + 1];
      const count = ops[i + 2] as number;
      i += 1 + RUN_HEADER_FIELDS;
      for (let m = 0; m < count; m++, i += RUN_MESSAGE_FIELDS) {
        const posted = this.posted.get(ops[i + 1] as number);
        if (posted === undefined) continue;
        const single = [ToThread.Run, channel, 1, ...ops.slice(i, i + RUN_MESSAGE_FIELDS)];
        try {
          worker.postMessage(single, posted.client.handler.transfer?.(posted.message) ?? []);
        } catch (err) {
          this.failHeld(posted, err);
        }
      }
    }
  }

  /** Stops every thread: each cancels its handlers and exits; resolves once all have exited. */
  private stopThreads(awaited: boolean): Promise<void> {
    const exits: Promise<unknown>[] = [];
    for (const slot of this.slots) {
      const worker = slot.worker;
      if (worker === null) continue;
      slot.push(ToThread.Stop);
      slot.flush();
      slot.worker = null;
      slot.opened.clear();
      // An awaited stop (close) keeps the process alive until the thread has exited; an idle stop never does.
      if (awaited) worker.ref();
      exits.push(stopped(worker));
    }
    return Promise.all(exits).then(() => undefined);
  }

  /**
   * Closes the executor by cancelling, not draining: dispatchers still running on it error with
   * `KeyedExecutorClosedError` (their unfinished messages are not settled, so a transport redelivers
   * them), the handlers running in the threads are unsubscribed, and the threads are terminated. The
   * promise resolves once every thread has exited. To drain, let your pipelines complete first (await
   * them), then close. No dispatcher can start on a closed executor. The shared executor cannot be closed.
   */
  async close(): Promise<void> {
    if (this.isShared)
      throw new Error('ThreadExecutor.shared cannot be closed; it stops its threads whenever it is idle');
    if (this.isClosed) return;
    this.isClosed = true;
    const error = new KeyedExecutorClosedError();
    for (const client of [...this.clients.values()]) client.terminate(error);
    await this.stopThreads(true);
  }
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

/** Fields after the op code of an operation other than RUN. */
function fieldsOf(op: ToThread): number {
  if (op === ToThread.Open) return OPEN_FIELDS;
  return op === ToThread.Close ? CLOSE_FIELDS : STOP_FIELDS;
}
