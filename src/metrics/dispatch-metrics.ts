import { asyncScheduler, defer, interval, map, type Observable, type SchedulerLike } from 'rxjs';
import type { EventLoopLanes } from '../engine/event-loop-lanes';
import { callUser } from '../internal/call-user';
import { warnCallbackFailed } from '../internal/warn';
import {
  type DispatchCounters,
  type DispatchSnapshot,
  DispatchStats,
  type HandlerTimer,
  type HotKey,
  intakeBatch,
  linkStats,
  statsLink,
} from '../stats';
import { describe, durationOption, integerOption, optionsObject } from '../validate';
import { exposeLanes } from './executor-lanes';
import { Histogram, type LatencySummary } from './histogram';
import { type OldestUnfinished, OldestUnfinishedTracker } from './oldest-unfinished';

/** Options of `DispatchMetrics`. */
export interface DispatchMetricsOptions {
  /** Keys listed in `hotKeys` of each snapshot (largest backlog first). Integer ≥ 0. Default 10. */
  hotKeys?: number;
  /**
   * One handler in `sampleEvery` is timed for the latency histogram (one at a time: a sample that falls
   * due while another handler is still being timed is skipped), and one drain of the lane loop in
   * `sampleEvery` (the turns it runs until no lane has work) for the busy ratio: its duration counts
   * `sampleEvery` times, shared among the lanes by the handlers each started in it. Reading the clock
   * costs about as much as dispatching a message, so a lower value costs fast handlers throughput; 1
   * times everything (exact, for slow handlers or tests). Integer ≥ 1. Default 256.
   */
  sampleEvery?: number;
  /**
   * Counts synchronous lane runs (a turn, a continuation) longer than this many milliseconds: a handler
   * blocking the event loop. Turning it on times every run (two clock reads each). Number > 0.
   * Default: off.
   */
  longTurnMs?: number;
}

/** One lane of the dispatcher's executor. */
export interface LaneMetrics {
  /** The lane's index in its executor (the handler context's `laneIndex`). */
  readonly index: number;
  /** Runnables (mailbox turns, continuations) waiting on the lane now: its queue depth. */
  readonly ready: number;
  /** Live mailboxes pinned to the lane, of every dispatcher sharing the executor. */
  readonly pinned: number;
  /** Estimated time the lane spent running since the dispatcher started, in ms (sampled, see `sampleEvery`). */
  readonly busyMs: number;
  /** Share of the window the lane spent running, 0–1 (an estimate, see `sampleEvery`). */
  readonly busyRatio: number;
}

/** A dispatcher's metrics at one moment; rates, busy ratios and `windowLatency` cover the last `windowMs`. */
export interface MetricsSnapshot extends DispatchSnapshot {
  /** When it was taken, in the scheduler's milliseconds. */
  readonly time: number;
  /** The window the rates cover: since the previous snapshot of the stream, or since the dispatcher started. */
  readonly windowMs: number;
  /** Messages admitted into the window per second, over `windowMs`. */
  readonly admittedPerSecond: number;
  /** Messages settled (`done` or `failed`) per second, over `windowMs`. */
  readonly settledPerSecond: number;
  /** The keys with the most unfinished messages (running or queued), largest first. */
  readonly hotKeys: readonly HotKey[];
  /**
   * The key holding the dispatcher's intake, or null: set while the window has no room for another
   * batch and one key holds at least half of it (possible with the per-key share off), or while the
   * parking area has no room and one key's messages are at least half of those parked. A window full of
   * many keys, while one key parks in a parking area with room, is not held by that key.
   */
  readonly heldBy: HotKey | null;
  /** Each lane of the executor, by index; empty on thread lanes. */
  readonly lanes: readonly LaneMetrics[];
  /** Handler durations (start → completion) of the timed handlers since the dispatcher started. */
  readonly latency: LatencySummary;
  /** Handler durations of the timed handlers in the window. */
  readonly windowLatency: LatencySummary;
  /**
   * The oldest message in flight and how long it has been unfinished, to the time between two readings
   * (`read()` or `snapshots`); null when none is in flight. Each reading looks at the messages in the
   * window (no clock is read per message), so it costs time in proportion to `inFlight`.
   */
  readonly oldestUnfinished: OldestUnfinished | null;
  /** Lane runs longer than `longTurnMs` since the dispatcher started (zeros when `longTurnMs` is off). */
  readonly longTurns: {
    /** How many lane runs took longer than `longTurnMs`. */
    readonly count: number;
    /** The longest of them, in ms. */
    readonly maxMs: number;
  };
}

/** What a window starts from. */
interface Baseline {
  /** The dispatcher run it belongs to: a window never spans two runs. */
  run: number;
  time: number;
  admitted: number;
  settled: number;
  latency: Histogram;
  busyMs: number[];
}

/**
 * `DispatchStats` plus what it takes to run a dispatcher in production: handler latency percentiles,
 * per-key backlogs with the hot keys, lane queue depths and busy ratios, long synchronous turns. Pass it
 * as the `stats` option, then read it (`read()`) or watch it (`snapshots(periodMs)`).
 * Without it a dispatcher times nothing; with it, timing is sampled (see `sampleEvery`).
 */
export class DispatchMetrics extends DispatchStats {
  /** How many keys a snapshot lists in `hotKeys` (the `hotKeys` option). */
  readonly hotKeyCount: number;
  /** One handler (and one lane-loop drain) in this many is timed (the `sampleEvery` option). */
  readonly sampleEvery: number;
  /** Lane runs at least this long are counted as long turns; `undefined` when off (the `longTurnMs` option). */
  readonly longTurnMs: number | undefined;
  /** Timed handler durations since the dispatcher started. */
  readonly #latency = new Histogram();
  /** Each lane's `busyMs` when the dispatcher started: the lanes keep one running sum for all meters. */
  #busyBase: number[] = [];
  /** Estimated busy milliseconds per lane over the dispatcher's run, fixed once it has ended (null while it runs). */
  #busyFinal: number[] | null = null;
  #longTurnCount = 0;
  #longTurnMaxMs = 0;
  /** The running dispatcher, or null: its window's messages are dated for `oldestUnfinished`. */
  #source: DispatchCounters | null = null;
  readonly #oldest = new OldestUnfinishedTracker();
  /** The lanes of the last dispatcher attached (event-loop lanes only): readable after it ends. */
  #lanes: EventLoopLanes | null = null;
  /** The state when the dispatcher started, and when it ended (null while it runs). */
  #start: Baseline;
  #endedAt: number | null = null;
  /** Stops the lane watches of the running dispatcher. */
  #unwatch: Array<() => void> = [];
  /** Dispatcher runs attached so far. */
  #run = 0;
  readonly #timer: HandlerTimer;
  /** Receive each timed handler duration (exporters that keep their own histogram). */
  readonly #durationListeners = new Set<(durationMs: number) => void>();

  /** Clock of `time`, `windowMs` and rates. */
  readonly #scheduler: SchedulerLike;

  constructor(
    options: DispatchMetricsOptions = {},
    /** Clock of `time`, `windowMs` and rates. Default `asyncScheduler` (virtual inside `TestScheduler.run`). */
    scheduler: SchedulerLike = asyncScheduler,
  ) {
    super();
    this.#scheduler = scheduler;
    optionsObject('DispatchMetrics', options, ['hotKeys', 'sampleEvery', 'longTurnMs'] satisfies Array<
      keyof DispatchMetricsOptions
    >);
    this.hotKeyCount = integerOption('DispatchMetrics', 'hotKeys', options.hotKeys, 10, 0);
    this.sampleEvery = integerOption('DispatchMetrics', 'sampleEvery', options.sampleEvery, 256, 1);
    const longTurnMs = options.longTurnMs;
    if (
      longTurnMs !== undefined &&
      !(typeof longTurnMs === 'number' && longTurnMs > 0 && Number.isFinite(longTurnMs))
    ) {
      throw new TypeError(
        `DispatchMetrics: expected \`longTurnMs\` to be a number > 0, got ${describe(longTurnMs)}`,
      );
    }
    this.longTurnMs = longTurnMs;
    this.#timer = new LatencyRecorder(this.sampleEvery, this.#latency, this.#durationListeners);
    this.#start = this.#baseline();
    const counters = statsLink(this);
    linkStats(this, {
      handlerTimer: () => this.#timer,
      attach: (source) => {
        this.#stopWatching();
        counters.attach(source);
        this.#attached(source);
      },
      detach: (source) => counters.detach(source) && this.#detached(),
      facts: () => counters.facts(),
    });
    exposeLanes(this, () => this.#lanes);
  }

  /** A dispatcher started: measure its lanes from here. */
  #attached(source: DispatchCounters): void {
    this.#latency.reset();
    this.#longTurnCount = 0;
    this.#longTurnMaxMs = 0;
    this.#run++;
    this.#source = source;
    this.#oldest.reset();
    // Lanes and latency are measured where handlers run, on this thread's lanes; on thread lanes the
    // snapshot has the dispatcher's counters, hot keys and long turns (seen from this thread) only.
    const lanes = source.localLanes;
    this.#lanes = lanes;
    this.#endedAt = null;
    this.#busyFinal = null;
    this.#busyBase = lanes ? lanes.lanes.map((lane) => lane.busyMs) : [];
    this.#start = this.#baseline();
    if (lanes !== null) this.#unwatch.push(lanes.measureBusy(this.sampleEvery));
    if (this.longTurnMs !== undefined) {
      this.#unwatch.push(
        source.watchLongTurns(this.longTurnMs, (_lane, ms) => {
          this.#longTurnCount++;
          if (ms > this.#longTurnMaxMs) this.#longTurnMaxMs = ms;
        }),
      );
    }
  }

  /** The dispatcher ended: busy time is fixed once its last run is over. */
  #detached(): boolean {
    // A dispatcher ends inside the lane run that settles its last message: stopping the watches now would
    // miss that run's duration, so they stop once the current synchronous work is done.
    const unwatch = this.#unwatch;
    this.#unwatch = [];
    const run = this.#run;
    this.#source = null;
    queueMicrotask(() => {
      if (this.#run === run) this.#busyFinal = this.#laneBusy();
      for (const stop of unwatch) stop();
    });
    this.#endedAt = this.#scheduler.now();
    return true;
  }

  /**
   * Calls `listener` with each timed handler duration in ms (one handler in `sampleEvery`). Returns the
   * function that stops it. A listener that throws or rejects is no longer called and a process warning
   * (`KeyedDispatchWarning`) says why: it runs inside settlement, which it must never break.
   */
  onHandlerDuration(listener: (durationMs: number) => void): () => void {
    const stop = (): boolean => this.#durationListeners.delete(own);
    const failed = (err: unknown): void => {
      // Once: calls made before a rejection arrived may reject too.
      if (stop())
        warnCallbackFailed('DispatchMetrics.onHandlerDuration listener', 'is no longer called', err);
    };
    const own = (ms: number): void => {
      callUser(listener, ms, undefined, undefined, failed);
    };
    this.#durationListeners.add(own);
    return stop;
  }

  /** The metrics now; rates and busy ratios cover the whole run (from the dispatcher's start to now or its end). */
  read(): MetricsSnapshot {
    return this.#measure(this.#start, this.#endedAt ?? this.#scheduler.now());
  }

  /**
   * A snapshot every `periodMs` (on `scheduler`, default the metrics' scheduler), each with rates, busy
   * ratios and `windowLatency` over the period before it. Never completes; unsubscribe to stop.
   */
  snapshots(periodMs: number, scheduler: SchedulerLike = this.#scheduler): Observable<MetricsSnapshot> {
    durationOption('DispatchMetrics.snapshots', 'periodMs', periodMs, 0, 1);
    return defer(() => {
      let previous = this.#baseline(scheduler.now());
      return interval(periodMs, scheduler).pipe(
        map(() => {
          const snapshot = this.#measure(previous, scheduler.now());
          previous = this.#baseline(snapshot.time);
          return snapshot;
        }),
      );
    });
  }

  #measure(since: Baseline, now: number): MetricsSnapshot {
    const from = since.run === this.#run ? since : this.#start;
    const counters = this.snapshot();
    const windowMs = Math.max(0, now - from.time);
    const perSecond = (n: number) => (windowMs > 0 ? (n * 1000) / windowMs : 0);
    const busy = this.#laneBusy();
    const lanes = (this.#lanes?.lanes ?? []).map((lane, i) => {
      const busyMs = busy[i] ?? 0;
      const ratio = windowMs > 0 ? (busyMs - (from.busyMs[i] ?? 0)) / windowMs : 0;
      return {
        index: lane.index,
        ready: lane.ready.size,
        pinned: lane.pinned,
        busyMs,
        busyRatio: clamp01(ratio),
      };
    });
    return {
      ...counters,
      time: now,
      windowMs,
      admittedPerSecond: perSecond(counters.admitted - from.admitted),
      settledPerSecond: perSecond(counters.settled - from.settled),
      hotKeys: this.hotKeyCount > 0 ? this.hotKeys(this.hotKeyCount) : [],
      heldBy: heldBy(counters, this.hotKeys(1)[0]),
      lanes,
      latency: this.#latency.summary(),
      windowLatency: this.#latency.since(from.latency).summary(),
      oldestUnfinished: this.#source === null ? null : this.#oldest.read(this.#source.windowMessages(), now),
      longTurns: { count: this.#longTurnCount, maxMs: this.#longTurnMaxMs },
    };
  }

  #baseline(time = this.#scheduler.now()): Baseline {
    const counters = this.snapshot();
    return {
      run: this.#run,
      time,
      admitted: counters.admitted,
      settled: counters.settled,
      latency: this.#latency.copy(),
      busyMs: this.#laneBusy(),
    };
  }

  /** Estimated busy milliseconds per lane since the dispatcher started: live while it runs, fixed once it has ended. */
  #laneBusy(): number[] {
    if (this.#busyFinal !== null) return this.#busyFinal;
    return (this.#lanes?.lanes ?? []).map((lane, i) => lane.busyMs - (this.#busyBase[i] ?? 0));
  }

  #stopWatching(): void {
    for (const stop of this.#unwatch) stop();
    this.#unwatch = [];
  }
}

/** The handler timer given to dispatchers: one handler in `every` is timed. */
class LatencyRecorder implements HandlerTimer {
  constructor(
    readonly every: number,
    private readonly latency: Histogram,
    private readonly listeners: ReadonlySet<(durationMs: number) => void>,
  ) {}

  record(durationMs: number): void {
    this.latency.record(durationMs);
    if (this.listeners.size > 0) for (const listener of this.listeners) listener(durationMs);
  }
}

/** The key holding intake (see `MetricsSnapshot.heldBy`), if any. */
function heldBy(counters: DispatchSnapshot, top: HotKey | undefined): HotKey | null {
  if (top === undefined) return null;
  const batch = intakeBatch(counters.maxInFlight);
  // Each place is held by the key only when it is full and the key has at least half of it: parked
  // messages wait outside the window, so a window full of other keys is not the hot key's doing.
  const windowFull = counters.maxInFlight - counters.inFlight < batch;
  const parkingFull = counters.maxParked - counters.parked < Math.min(batch, counters.maxParked);
  const holdsWindow = windowFull && (top.backlog - top.parked) * 2 >= counters.inFlight;
  const holdsParking = parkingFull && top.parked * 2 >= counters.parked;
  return holdsWindow || holdsParking ? top : null;
}

function clamp01(x: number): number {
  return Math.min(1, Math.max(0, x));
}
