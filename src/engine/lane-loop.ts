import { callUser } from '../internal/call-user';
import { sharedSlot } from '../internal/shared-slot';
import { warnCallbackFailed } from '../internal/warn';

/** Something a lane runs: a mailbox's turn, a scheduled action, a deferred handler notification. */
export interface Runnable {
  /** Runs it; returns the handlers it started (a mailbox's turn) or 1, counted against the lane's step. */
  run(): number;
  /** The loop's link: the runnable behind this one in its lane's FIFO (null when last or not queued). */
  nextInLine: Runnable | null;
}

/**
 * A FIFO linked through its items (`nextInLine`), so queuing allocates nothing and touches only the
 * item and the last one. An item waits in one such queue at most, once: a lane's ready runnables, or the
 * loop's lanes with ready work.
 */
export class LinkedQueue<T extends { nextInLine: T | null }> {
  private first: T | null = null;
  private last: T | null = null;
  /** Number of queued items. */
  size = 0;

  push(item: T): void {
    item.nextInLine = null;
    if (this.last === null) this.first = item;
    else this.last.nextInLine = item;
    this.last = item;
    this.size++;
  }

  /** The oldest item, taken out; null when empty. */
  shift(): T | null {
    const item = this.first;
    if (item === null) return null;
    this.first = item.nextInLine;
    if (this.first === null) this.last = null;
    item.nextInLine = null;
    this.size--;
    return item;
  }
}

/**
 * Handler runs a lane may start in one step before the next lane with ready work gets the thread (the
 * runnable in progress finishes first). Handing the thread over after every runnable costs throughput
 * with many short-lived mailboxes; 16 keeps a lane's wait as short as one full turn.
 */
export const LANE_STEP = 16;

/** A lane as its loop sees it: a FIFO of ready runnables and where it is in the loop. */
export interface LoopLane {
  readonly ready: LinkedQueue<Runnable>;
  /** The loop's link: the lane behind this one in its run queue (null when last or not scheduled). */
  nextInLine: LoopLane | null;
  state: LaneState;
  /**
   * Estimated milliseconds the lane spent running while its loop measured busy time (see
   * `LaneLoop.measureBusy`); a plain sum, so metrics read differences of it.
   */
  busyMs: number;
  /** Handlers the lane started in the pass being timed for busy time (0 otherwise). */
  timedRuns: number;
}

export enum LaneState {
  /** Nothing ready; not in the loop's run queue. */
  Idle = 0,
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
 * while an admission batch is open or while a pass over the lanes is already under way further up the
 * stack: re-entrant work is queued, never nested, so no stack grows with the number of messages. The
 * one exception is bounded: a mailbox that a dispatcher's refill opens inside a turn may start there,
 * never nested, within the lane's step (`beginWithin`).
 */
export class LaneLoop {
  /** Lanes with ready work, in the order they will get the thread. */
  private readonly scheduled = new LinkedQueue<LoopLane>();
  /** Runnables queued on the lanes, all of them: none means no lane has work waiting. */
  private waiting = 0;
  /** Open admission batches, which must finish before lanes run. */
  private admissionBatches = 0;
  /**
   * Open refills: a dispatcher admits what it pulled after a handler ended, with no code of the user's on
   * the stack; only then may a new key's first message start in the running turn (see `beginWithin`).
   */
  private refills = 0;
  /** True while `runLanes` is on the stack. */
  private runningLanes = false;
  /** A pass over the lanes is queued as a microtask (see `wakeSoon`). */
  private runQueued = false;
  /** The lane whose runnable is executing now, or null between runs. */
  current: LoopLane | null = null;
  /** Handlers the current lane has started in its step so far (see `LANE_STEP`). */
  private stepStarts = 0;
  /** The lane whose turn is running while one begun by `beginWithin` on an idle lane runs inside it. */
  private within: LoopLane | null = null;
  /** Runnables started within the current lane's step so far (see `freeRunningLane`). */
  private withinStarts = 0;
  /**
   * Why nothing may start within a turn now (see `beginWithin`), counted: open `blockStarts` calls, a
   * start within under way (no other may nest in it), and runs being timed (`measuring`).
   */
  private startsBlocked = 0;
  /** Long synchronous runs are reported to these (empty unless someone asked for it). */
  private readonly longTurnListeners = new Set<{ thresholdMs: number; listener: LongTurnListener }>();
  private longTurnThresholdMs = Number.POSITIVE_INFINITY;
  /** Sampling intervals asked for by busy-time meters (empty unless metrics are on). */
  private readonly busyIntervals: number[] = [];
  /** True while long turns are watched: every run is timed (and busy time is their exact sum). */
  private timingRuns = false;
  /**
   * Passes between two timed ones for busy time while runs are not timed (reading the clock costs as
   * much as a trivial turn), 0 when nobody measures busy time.
   */
  private busyEvery = 0;
  /** Runs are timed, or passes are: turns then start only in a pass, which times them. */
  private measuring = false;
  /** Passes left until the next timed one. */
  private untilBusy = 0;
  /** Lanes that ran in the pass being timed, to share its duration by their handler runs. */
  private readonly timedLanes: LoopLane[] = [];

  /** Queues `runnable` on `lane`; an idle lane joins the run queue and runs now unless admissions are being batched. */
  enqueue(lane: LoopLane, runnable: Runnable): void {
    lane.ready.push(runnable);
    this.waiting++;
    if (lane.state === LaneState.Idle) this.wake(lane);
  }

  /**
   * Queues work that arrives from outside any turn (a handler's Promise settling): an idle lane runs in
   * a microtask rather than now, so the completions that settle in one batch of microtasks share one pass.
   */
  enqueueSoon(lane: LoopLane, runnable: Runnable): void {
    lane.ready.push(runnable);
    this.waiting++;
    if (lane.state === LaneState.Idle) this.wakeSoon(lane);
  }

  /** Puts a lane that just got ready work into the run queue, and runs it now unless admissions are being batched. */
  private wake(lane: LoopLane): void {
    lane.state = LaneState.Scheduled;
    this.scheduled.push(lane);
    if (!this.runningLanes && this.admissionBatches === 0) this.runLanes();
  }

  /**
   * Like `wake`, but the pass runs in a microtask (one for all the lanes woken meanwhile). Promises
   * settle in batches of microtasks: their completions then share one pass instead of one each.
   */
  private wakeSoon(lane: LoopLane): void {
    lane.state = LaneState.Scheduled;
    this.scheduled.push(lane);
    if (!this.runningLanes && this.admissionBatches === 0) this.queueRun();
  }

  /** Runs now the pass that `wakeSoon` queued, if any: for work that must see those completions first. */
  runQueuedNow(): void {
    if (this.runQueued) this.runSoon();
  }

  private queueRun(): void {
    if (this.runQueued) return;
    this.runQueued = true;
    queueMicrotask(this.runSoon);
  }

  private readonly runSoon = (): void => {
    this.runQueued = false;
    if (!this.runningLanes && this.admissionBatches === 0 && this.scheduled.size > 0) this.runLanes();
  };

  /**
   * Starts a turn of `lane` right here, outside any pass, for work that arrives in a callback (a timer, a
   * Promise inside an Observable) while the loop is idle and `lane` has nothing ready: no trip through its
   * FIFO, and no object to queue. False, starting nothing, otherwise (and while runs are timed, which
   * passes do). End it with `endTurn`.
   */
  beginTurn(lane: LoopLane): boolean {
    if (this.runningLanes || this.admissionBatches !== 0 || this.measuring || lane.state !== LaneState.Idle)
      return false;
    if (this.scheduled.size !== 0) return false;
    this.runningLanes = true;
    this.current = lane;
    this.stepStarts = 0;
    this.withinStarts = 0;
    lane.state = LaneState.Running;
    return true;
  }

  /**
   * The running lane if it may take a new mailbox with no hand-off, else null: nothing was started within
   * its step yet (else every key of a refill would pile onto the lane whose handler ended, and a lane
   * without keys would never get one again) and nothing is queued on it.
   */
  freeRunningLane(): LoopLane | null {
    const lane = this.current;
    return this.withinStarts === 0 && lane !== null && lane.ready.size === 0 ? lane : null;
  }

  /**
   * Begins, right here, a turn of `lane` inside the turn running now, for a mailbox that just got its
   * first message on `lane`, skipping `lane`'s FIFO: when no lane has work waiting (the running one
   * included), `lane` is the running lane or an idle one, runs are not being timed, the running step has
   * room, and no other such start or in-place end is under way (so starts never nest, and none runs
   * inside code of the turn that is still on the stack), during a refill (`beginRefill`). On an idle lane it runs as a turn of that lane
   * (`current` is that lane meanwhile). False, beginning nothing, otherwise. The caller runs the mailbox
   * and ends it with `endWithin`, giving the handlers it started: they count in the running lane's step.
   */
  beginWithin(lane: LoopLane): boolean {
    const running = this.current;
    if (
      this.refills === 0 ||
      running === null ||
      this.waiting !== 0 ||
      this.startsBlocked !== 0 ||
      this.stepStarts >= LANE_STEP
    )
      return false;
    if (lane !== running && lane.state !== LaneState.Idle) return false;
    this.startsBlocked++;
    this.withinStarts++;
    if (lane !== running) {
      this.within = running;
      this.current = lane;
      lane.state = LaneState.Running;
    }
    return true;
  }

  /** Ends what `beginWithin` began; `started`: the handlers started meanwhile. */
  endWithin(lane: LoopLane, started: number): void {
    this.stepStarts += started;
    this.startsBlocked--;
    const running = this.within;
    if (running !== null) {
      this.within = null;
      this.current = running;
      this.waitOrSchedule(lane);
    }
  }

  /** A lane whose turn ended: back in the run queue if it has ready work, else idle. */
  private waitOrSchedule(lane: LoopLane): void {
    if (lane.ready.size > 0) {
      lane.state = LaneState.Scheduled;
      this.scheduled.push(lane);
    } else {
      lane.state = LaneState.Idle;
    }
  }

  /**
   * Until the matching `unblockStarts`, nothing starts within a turn: for work done in place while code
   * of the running turn (a handler, a subscriber, a scheduled action) is still on the stack.
   */
  blockStarts(): void {
    this.startsBlocked++;
  }

  unblockStarts(): void {
    this.startsBlocked--;
  }

  /**
   * Runs `runnable` as a turn of `lane` right here when `beginTurn` allows it; false, running nothing,
   * otherwise.
   */
  runNow(lane: LoopLane, runnable: Runnable): boolean {
    if (!this.beginTurn(lane)) return false;
    try {
      runSafely(runnable);
    } finally {
      this.endTurn(lane);
    }
    return true;
  }

  /** Ends the turn `beginTurn` started, then runs what it made ready. */
  endTurn(lane: LoopLane): void {
    this.current = null;
    this.runningLanes = false;
    lane.state = LaneState.Idle;
    if (lane.ready.size > 0) this.wake(lane);
    else if (this.scheduled.size > 0) this.runLanes();
  }

  /**
   * Until the matching `endRefill`, the admissions under way are a refill after a handler ended, with
   * none of the user's code on the stack: a new key's mailbox may start in the running turn.
   */
  beginRefill(): void {
    this.refills++;
  }

  endRefill(): void {
    this.refills--;
  }

  /** Defers running lanes until the matching `flushAdmissions`, so a batch of admissions lands before any turn. */
  batchAdmissions(): void {
    this.admissionBatches++;
  }

  flushAdmissions(): void {
    if (--this.admissionBatches === 0 && !this.runningLanes && this.scheduled.size > 0) this.runLanes();
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
   * Estimates the time lanes spend running into each lane's `busyMs`: times one pass of the loop in
   * `every` and adds its duration times that interval (an unbiased estimate), shared among the lanes
   * that ran in it by the handlers each started; while long turns are watched, every run is timed and
   * added to its lane. Returns the function that stops it. The clock is read where a pass starts and
   * ends, outside its loop, and no callback runs per sample: the loop does the same work whether or not
   * busy time is measured.
   */
  measureBusy(every: number): () => void {
    this.busyIntervals.push(every);
    this.updateMeasuring();
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      this.busyIntervals.splice(this.busyIntervals.indexOf(every), 1);
      this.updateMeasuring();
    };
  }

  private updateThreshold(): void {
    let min = Number.POSITIVE_INFINITY;
    for (const e of this.longTurnListeners) min = Math.min(min, e.thresholdMs);
    this.longTurnThresholdMs = min;
    this.updateMeasuring();
  }

  private updateMeasuring(): void {
    this.timingRuns = this.longTurnListeners.size > 0;
    this.busyEvery = this.timingRuns || this.busyIntervals.length === 0 ? 0 : Math.min(...this.busyIntervals);
    const measuring = this.timingRuns || this.busyEvery !== 0;
    if (measuring !== this.measuring) this.startsBlocked += measuring ? 1 : -1;
    this.measuring = measuring;
    this.untilBusy = this.busyEvery;
  }

  private runLanes(): void {
    this.runningLanes = true;
    const passSince = this.busyEvery !== 0 && --this.untilBusy === 0 ? this.beginTimedPass() : -1;
    try {
      for (let lane = this.scheduled.shift(); lane !== null; lane = this.scheduled.shift()) {
        this.current = lane;
        this.stepStarts = 0;
        this.withinStarts = 0;
        lane.state = LaneState.Running;
        // Runnables until LANE_STEP handlers have run; while no other lane waits, the lane keeps the thread.
        do {
          const runnable = lane.ready.shift() as Runnable;
          this.waiting--;
          // A timed run goes through this same call, so a turn has one path, timed or not.
          const runSince = this.timingRuns ? performance.now() : -1;
          // Read after the run: what it started within the turn counts too (see `beginWithin`).
          const started = runSafely(runnable);
          this.stepStarts += started;
          if (runSince >= 0) this.endRun(lane, runSince);
        } while (lane.ready.size > 0 && (this.stepStarts < LANE_STEP || this.scheduled.size === 0));
        if (passSince >= 0) this.countTimedRuns(lane, this.stepStarts);
        this.waitOrSchedule(lane);
      }
    } finally {
      this.current = null;
      this.runningLanes = false;
      if (passSince >= 0) this.endTimedPass(passSince);
    }
  }

  private beginTimedPass(): number {
    this.untilBusy = this.busyEvery;
    return performance.now();
  }

  private countTimedRuns(lane: LoopLane, started: number): void {
    if (lane.timedRuns === 0) this.timedLanes.push(lane);
    lane.timedRuns += started;
  }

  /** One pass in `busyEvery` is timed, so its duration stands for that many: shared by handler runs. */
  private endTimedPass(since: number): void {
    const durationMs = (performance.now() - since) * this.busyEvery;
    let runs = 0;
    for (const lane of this.timedLanes) runs += lane.timedRuns;
    for (const lane of this.timedLanes) {
      lane.busyMs += (durationMs * lane.timedRuns) / runs;
      lane.timedRuns = 0;
    }
    this.timedLanes.length = 0;
  }

  /**
   * A listener that throws or rejects is a bug in monitoring code: it must not stop the lanes. It is no
   * longer called, and a process warning says why.
   */
  private tellLongTurn(
    entry: { thresholdMs: number; listener: LongTurnListener },
    lane: LoopLane,
    durationMs: number,
  ): void {
    callUser(entry.listener, lane, durationMs, undefined, (err) => {
      // Once: calls made before a rejection arrived may reject too.
      if (!this.longTurnListeners.delete(entry)) return;
      this.updateThreshold();
      warnCallbackFailed('onLongTurn', 'is no longer called', err);
    });
  }

  /** Reports the duration of a run that just ended (runs are timed while long turns are watched). */
  private endRun(lane: LoopLane, since: number): void {
    const durationMs = performance.now() - since;
    if (durationMs >= this.longTurnThresholdMs) {
      for (const e of this.longTurnListeners)
        if (durationMs >= e.thresholdMs) this.tellLongTurn(e, lane, durationMs);
    }
    if (this.busyIntervals.length > 0) lane.busyMs += durationMs;
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
    reportLater(err);
    return 1;
  }
}

/** Throws `err` off the stack, where the process reports it as uncaught (as RxJS reports what nobody handles). */
export function reportLater(err: unknown): void {
  setTimeout(() => {
    throw err;
  });
}

/** The loop of each thread, on its global object (see `threadLoop`). */
const threadLoops = sharedSlot<LaneLoop>('threadLoop');

/**
 * The loop of the thread this module is loaded in (the main thread, or one worker thread). Kept on the
 * thread's global object, so every copy of the library in the thread (its CommonJS and ESM builds) runs
 * on the same loop: a dispatcher of one copy batches its admissions on the lanes of another copy's executor.
 */
export const threadLoop: LaneLoop = threadLoops.of(globalThis) ?? firstLoopOfThread();

function firstLoopOfThread(): LaneLoop {
  const loop = new LaneLoop();
  threadLoops.attach(globalThis, loop);
  return loop;
}
