import { callUser } from '../internal/call-user';
import { warnCallbackFailed } from '../internal/warn';
import { RUNNING_MESSAGE, RUNS_STARTED } from './protocol';
import type { ThreadSlot } from './thread-slot';

/** A long-turn listener and its threshold. */
interface LongTurnWatch {
  readonly thresholdMs: number;
  readonly listener: (laneIndex: number, durationMs: number) => void;
}

/** What the watch last saw of one lane's thread. */
interface Seen {
  /** The thread's watch memory it was read from (a replacement thread has its own). */
  memory: Int32Array | null;
  runs: number;
  messageId: number;
  /** When this run was first seen running (main thread's clock). */
  since: number;
  /** Listeners told of this run already, and whether the bound was applied to it. */
  readonly told: Set<LongTurnWatch>;
  bounded: boolean;
}

/** The watch reads the threads this often: a quarter of the smallest threshold, within these bounds. */
const MIN_TICK_MS = 5;
const MAX_TICK_MS = 250;

/**
 * Watches thread lanes from the main thread for a handler that holds its thread: a thread blocked in a
 * handler cannot report itself, so each thread marks, in memory both sides share, which message's
 * handler it is running (see `RUNNING_MESSAGE`), and this watch reads that on a timer. A run seen for
 * `thresholdMs` is told to each long-turn listener once (with how long it has run so far), and one seen
 * for `maxBlockingMs` is handed to `onBlocked` (which terminates its thread).
 */
export class BlockWatch {
  private readonly listeners = new Set<LongTurnWatch>();
  private readonly seen: Seen[];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly slots: readonly ThreadSlot[],
    private readonly maxBlockingMs: number | undefined,
    private readonly onBlocked: (slot: ThreadSlot, messageId: number) => void,
  ) {
    this.seen = slots.map(() => ({
      memory: null,
      runs: 0,
      messageId: 0,
      since: 0,
      told: new Set(),
      bounded: false,
    }));
    this.restart();
  }

  /** Tells `listener` of every handler run on these lanes that holds its thread `thresholdMs` or longer. */
  watch(thresholdMs: number, listener: (laneIndex: number, durationMs: number) => void): () => void {
    const entry: LongTurnWatch = { thresholdMs, listener };
    this.listeners.add(entry);
    this.restart();
    return () => {
      if (this.listeners.delete(entry)) this.restart();
    };
  }

  stop(): void {
    this.listeners.clear();
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** (Re)starts the timer at the period the thresholds ask for, or stops it when nothing is watched. */
  private restart(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    let smallest = this.maxBlockingMs ?? Number.POSITIVE_INFINITY;
    for (const entry of this.listeners) smallest = Math.min(smallest, entry.thresholdMs);
    if (smallest === Number.POSITIVE_INFINITY) return;
    const period = Math.min(MAX_TICK_MS, Math.max(MIN_TICK_MS, Math.floor(smallest / 4)));
    this.timer = setInterval(() => this.tick(), period);
    // The watch never keeps the process alive: the threads' messages do, while they hold any.
    this.timer.unref();
  }

  private tick(): void {
    const now = performance.now();
    for (const slot of this.slots) {
      const memory = slot.watchMemory;
      if (slot.worker === null || memory === null) continue;
      const seen = this.seen[slot.index] as Seen;
      const messageId = Atomics.load(memory, RUNNING_MESSAGE);
      const runs = Atomics.load(memory, RUNS_STARTED);
      if (seen.memory !== memory || seen.runs !== runs || seen.messageId !== messageId) {
        seen.memory = memory;
        seen.runs = runs;
        seen.messageId = messageId;
        seen.since = now;
        seen.told.clear();
        seen.bounded = false;
        continue;
      }
      if (messageId === 0) continue;
      const ms = now - seen.since;
      for (const entry of this.listeners) {
        if (ms < entry.thresholdMs || seen.told.has(entry)) continue;
        seen.told.add(entry);
        this.tell(entry, slot.index, ms);
      }
      if (this.maxBlockingMs !== undefined && ms >= this.maxBlockingMs && !seen.bounded) {
        seen.bounded = true;
        this.onBlocked(slot, messageId);
      }
    }
  }

  /**
   * A listener that throws or rejects is a bug in monitoring code: it must not stop the lanes. As on
   * event-loop lanes, it is no longer called, and a process warning says why.
   */
  private tell(entry: LongTurnWatch, laneIndex: number, durationMs: number): void {
    callUser(entry.listener, laneIndex, durationMs, undefined, (err) => {
      if (!this.listeners.delete(entry)) return;
      this.restart();
      warnCallbackFailed('onLongTurn', 'is no longer called', err);
    });
  }
}
