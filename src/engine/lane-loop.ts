import { RingQueue } from '../internal/ring-queue';

/** Something a lane runs: a mailbox's turn, a scheduled action, a deferred handler notification. */
export interface Runnable {
  /** Runs it; returns the handlers it started (a mailbox's turn) or 1, counted against the lane's step. */
  run(): number;
}

/**
 * Handler runs a lane may start in one step before the next lane with ready work gets the thread (the
 * runnable in progress finishes first). Handing the thread over after every runnable cost ~10 % of
 * throughput with many short-lived mailboxes; 16 keeps a lane's wait as short as one full turn.
 */
export const LANE_STEP = 16;

/** A lane as its loop sees it: a FIFO of ready runnables and where it is in the loop. */
export interface LoopLane {
  readonly ready: RingQueue<Runnable>;
  state: LaneState;
  /**
   * Estimated milliseconds the lane spent running while its loop measured busy time (see
   * `LaneLoop.measureBusy`); a plain sum, so metrics read differences of it.
   */
  busyMs: number;
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

/**
 * Runs the lanes of one thread: a trampoline over the lanes that have ready work, round-robin, so lanes
 * share the thread fairly: a lane's step runs its runnables until they have started `LANE_STEP`
 * handlers (the last turn finishes), then the next lane with ready work gets the thread. Nothing runs
 * while a hold is taken (an admission batch) or while a drain is already under way further up the
 * stack: re-entrant work is queued, never nested, so no stack grows with the number of messages.
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
  /** Sampling intervals asked for by busy-time meters (empty unless metrics are on). */
  private readonly busyIntervals: number[] = [];
  /**
   * Runs between two timed runs: 1 while long turns are watched (every run is timed), the busy meters'
   * sampling interval otherwise (reading the clock costs ~65 ns, as much as a trivial turn), 0 when
   * nobody measures. One countdown serves both, so a measured loop pays one decrement per run.
   */
  private measureEvery = 0;
  /** Runs left until the next timed one. */
  private untilMeasured = 0;
  /** The lane whose run is being timed now, and when it started (null between timed runs). */
  private measuredLane: LoopLane | null = null;
  private measuredSince = 0;

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
   * Estimates the time lanes spend running into each lane's `busyMs`: times one run in `every` (every
   * run while long turns are watched) and adds its duration times that interval, an unbiased
   * estimate. Returns the function that stops it. No callback runs per sample: a listener closure
   * inlined into the loop would be dropped with it at each garbage collection, and the loop with it.
   */
  measureBusy(every: number): () => void {
    this.busyIntervals.push(every);
    this.updateMeasureEvery();
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      this.busyIntervals.splice(this.busyIntervals.indexOf(every), 1);
      this.updateMeasureEvery();
    };
  }

  private updateThreshold(): void {
    let min = Number.POSITIVE_INFINITY;
    for (const e of this.longTurnListeners) min = Math.min(min, e.thresholdMs);
    this.longTurnThresholdMs = min;
    this.updateMeasureEvery();
  }

  private updateMeasureEvery(): void {
    let every = 0;
    if (this.longTurnListeners.size > 0) every = 1;
    else if (this.busyIntervals.length > 0) every = Math.min(...this.busyIntervals);
    this.measureEvery = every;
    this.untilMeasured = every;
  }

  private drain(): void {
    this.draining = true;
    try {
      for (let lane = this.scheduled.shift(); lane !== undefined; lane = this.scheduled.shift()) {
        this.current = lane;
        lane.state = LaneState.Running;
        // Runnables until LANE_STEP handlers have run; while no other lane waits, the lane keeps the thread.
        let started = 0;
        do {
          const runnable = lane.ready.shift() as Runnable;
          // The timed run goes through this same call: a second call site for measured runs would have
          // the compiler copy the whole turn into this loop a second time.
          if (this.measureEvery !== 0 && --this.untilMeasured === 0) this.beginMeasure(lane);
          started += runSafely(runnable);
          if (this.measuredLane !== null) this.endMeasure();
        } while (lane.ready.size > 0 && (started < LANE_STEP || this.scheduled.size === 0));
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

  private beginMeasure(lane: LoopLane): void {
    this.untilMeasured = this.measureEvery;
    this.measuredLane = lane;
    this.measuredSince = performance.now();
  }

  /** Reports the duration of the run that just ended. */
  private endMeasure(): void {
    const durationMs = performance.now() - this.measuredSince;
    const lane = this.measuredLane as LoopLane;
    this.measuredLane = null;
    if (durationMs >= this.longTurnThresholdMs) {
      for (const e of this.longTurnListeners) if (durationMs >= e.thresholdMs) e.listener(lane, durationMs);
    }
    // One run in `measureEvery` is timed, so its duration stands for that many runs: an unbiased estimate.
    if (this.busyIntervals.length > 0) lane.busyMs += durationMs * this.measureEvery;
  }
}

/**
 * A runnable never throws for a handler's error (those go to the dispatcher); a throw is a bug in
 * scheduled user work. Report it like RxJS does, off the stack, and keep the loop going.
 */
function runSafely(runnable: Runnable): number {
  try {
    return runnable.run();
  } catch (err) {
    setTimeout(() => {
      throw err;
    });
    return 1;
  }
}

/** The loop of the thread this module is loaded in (the main thread, or one worker thread). */
export const threadLoop = new LaneLoop();
