import { RingQueue } from '../internal/ring-queue';

/** Something a lane runs: a mailbox's turn, a scheduled action, a deferred handler notification. */
export interface Runnable {
  run(): void;
}

/** A lane as its loop sees it: a FIFO of ready runnables and where it is in the loop. */
export interface LoopLane {
  readonly ready: RingQueue<Runnable>;
  state: LaneState;
}

export enum LaneState {
  /** Nothing ready; not in the loop's run queue. */
  Parked = 0,
  /** Has ready work and waits in the loop's run queue. */
  Scheduled = 1,
  /** Running one of its runnables right now. */
  Running = 2,
}

/** Reports a synchronous run that took longer than the loop's threshold. */
export type LongTurnListener = (lane: LoopLane, durationMs: number) => void;

/** Receives the estimated time a lane spent running (a sampled run's duration times the sampling interval). */
export type BusyListener = (lane: LoopLane, estimatedMs: number) => void;

/**
 * Runs the lanes of one thread: a trampoline over the lanes that have ready work, one runnable per
 * lane per step, round-robin, so lanes share the thread fairly. Nothing runs while a hold is taken
 * (an admission batch) or while a drain is already under way further up the stack: re-entrant work is
 * queued, never nested, so no stack grows with the number of messages.
 */
export class LaneLoop {
  /** Lanes with ready work, in the order they will get the thread. */
  private readonly scheduled = new RingQueue<LoopLane>(16);
  /** Open holds: admission batches that must finish before lanes run. */
  private holds = 0;
  /** True while `drain` is on the stack. */
  private draining = false;
  /** The lane whose runnable is executing now, or null between runs. */
  current: LoopLane | null = null;
  /** Long synchronous runs are reported to these (empty unless someone asked for it). */
  private readonly longTurnListeners = new Set<{ thresholdMs: number; listener: LongTurnListener }>();
  private longTurnThresholdMs = Number.POSITIVE_INFINITY;
  /** Busy-time meters (empty unless metrics are on): reading the clock costs ~100 ns, so only 1 run in `busyEvery` is timed. */
  private readonly busyListeners = new Set<{ every: number; listener: BusyListener }>();
  /** Runs between two timed samples; 0 when nobody measures busy time. */
  private busyEvery = 0;
  /** Runs left until the next timed sample. */
  private untilBusySample = 0;

  /** Puts a lane that just got ready work into the run queue, and runs it now if nothing holds the loop. */
  wake(lane: LoopLane): void {
    lane.state = LaneState.Scheduled;
    this.scheduled.push(lane);
    if (!this.draining && this.holds === 0) this.drain();
  }

  /** Defers running lanes until the matching `release`, so a batch of admissions lands before any turn. */
  hold(): void {
    this.holds++;
  }

  release(): void {
    if (--this.holds === 0 && !this.draining && this.scheduled.size > 0) this.drain();
  }

  /** Watches for synchronous runs longer than `thresholdMs`; returns the function that stops watching. */
  watchLongTurns(thresholdMs: number, listener: LongTurnListener): () => void {
    const entry = { thresholdMs, listener };
    this.longTurnListeners.add(entry);
    this.updateThreshold();
    return () => {
      this.longTurnListeners.delete(entry);
      this.updateThreshold();
    };
  }

  /**
   * Estimates the time lanes spend running: times one run in `every` and reports its duration times
   * `every` (an unbiased estimate; `every` = 1 times every run). Returns the function that stops it.
   */
  watchBusy(every: number, listener: BusyListener): () => void {
    const entry = { every, listener };
    this.busyListeners.add(entry);
    this.updateBusyEvery();
    return () => {
      this.busyListeners.delete(entry);
      this.updateBusyEvery();
    };
  }

  private updateBusyEvery(): void {
    let min = 0;
    for (const e of this.busyListeners) min = min === 0 ? e.every : Math.min(min, e.every);
    this.busyEvery = min;
    this.untilBusySample = min;
  }

  private updateThreshold(): void {
    let min = Number.POSITIVE_INFINITY;
    for (const e of this.longTurnListeners) min = Math.min(min, e.thresholdMs);
    this.longTurnThresholdMs = min;
  }

  private drain(): void {
    this.draining = true;
    const timed = this.longTurnThresholdMs !== Number.POSITIVE_INFINITY;
    try {
      for (let lane = this.scheduled.shift(); lane !== undefined; lane = this.scheduled.shift()) {
        this.current = lane;
        lane.state = LaneState.Running;
        // One runnable per lane per step; while no other lane waits, the lane keeps the thread.
        do {
          const runnable = lane.ready.shift() as Runnable;
          const sampled = this.busyEvery !== 0 && --this.untilBusySample === 0;
          const started = timed || sampled ? performance.now() : 0;
          try {
            runnable.run();
          } catch (err) {
            // A runnable never throws for a handler's error (those go to the dispatcher); this is a bug
            // in scheduled user work. Report it like RxJS does, off the stack, and keep the loop going.
            setTimeout(() => {
              throw err;
            });
          }
          if (timed || sampled) {
            const durationMs = performance.now() - started;
            if (timed) this.reportIfLong(lane, durationMs);
            if (sampled) this.reportBusy(lane, durationMs);
          }
        } while (lane.ready.size > 0 && this.scheduled.size === 0);
        if (lane.ready.size > 0) {
          lane.state = LaneState.Scheduled;
          this.scheduled.push(lane);
        } else {
          lane.state = LaneState.Parked;
        }
      }
    } finally {
      this.current = null;
      this.draining = false;
    }
  }

  private reportBusy(lane: LoopLane, durationMs: number): void {
    const every = this.busyEvery;
    this.untilBusySample = every;
    for (const e of this.busyListeners) e.listener(lane, durationMs * every);
  }

  private reportIfLong(lane: LoopLane, durationMs: number): void {
    if (durationMs < this.longTurnThresholdMs) return;
    for (const e of this.longTurnListeners) if (durationMs >= e.thresholdMs) e.listener(lane, durationMs);
  }
}

/** The loop of the thread this module is loaded in (the main thread, or one worker thread). */
export const threadLoop = new LaneLoop();
