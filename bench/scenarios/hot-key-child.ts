// The hot-key scenario, run in one fresh process from a bundle (see hot-key.ts): `hot-key-child [rounds]`.
// Every contender runs in this process, alternating, on the same arrival schedules. Prints the results
// (`HotKeyResults`) as JSON on its last line.
import { getHeapStatistics } from 'node:v8';
import { concatMap, groupBy, mergeMap, Subject } from 'rxjs';
import { KeyedExecutor, keyedDispatch } from '../../src';
import { collect, median } from '../lib';
import { openLoopChain, paceArrivals, percentile, random, ScheduleReceiver } from '../open-loop';

interface Message {
  readonly key: number;
  /** Index in the schedule; also picks the handler's kind. */
  readonly seq: number;
}

export const KEYS = 1_000;
/** The hot key (in the uniform runs, one key among the others). Every other key is a cold key. */
export const HOT = 0;
/** Arrivals last this long; then the run waits up to `DRAIN_MS` for the cold messages to finish. */
export const ARRIVAL_MS = 500;
export const DRAIN_MS = 2_000;
export const WINDOW = 256;
/** Messages of the closed-loop runs that measure the maximum throughput. */
const MAX_RUN_MESSAGES = 100_000;
/** Offered rates, as fractions of keyedDispatch's maximum (uniform keys); 160 k/s is added when below it. */
export const FRACTIONS = [0.25, 0.5, 0.9];
export const TARGET_RATE = 160_000;

/** Contenders: id, label. */
export const CONTENDERS: Array<[string, string]> = [
  ['shared', 'keyedDispatch, shared window (maxPerKey = maxInFlight = 256)'],
  ['share', 'keyedDispatch default: per-key share (maxPerKey 64, maxParked 65,536)'],
  ['share-shallow', 'keyedDispatch, per-key share with a shallow parking area (maxParked 256)'],
  ['groupBy', 'groupBy(key) + concatMap (unbounded)'],
  ['chain', 'per-key promise chain, at most 256 unfinished'],
];

/**
 * The handler: half the messages wait one event-loop turn (`setImmediate`), a quarter `setTimeout(0)`
 * and a quarter `setTimeout(1)` (Node runs both after about 1 ms). When `timing` is on, each records
 * how long it took, by kind.
 */
const timing = { on: false, immediate: [] as number[], timeout: [] as number[] };
function handle(m: Message): Promise<Message> {
  return new Promise((resolve) => {
    const kind = m.seq & 3;
    const finish = timing.on ? timed(kind, resolve, m) : () => resolve(m);
    if (kind < 2) setImmediate(finish);
    else setTimeout(finish, kind - 2);
  });
}

function timed(kind: number, resolve: (m: Message) => void, m: Message): () => void {
  const started = performance.now();
  return () => {
    (kind < 2 ? timing.immediate : timing.timeout).push(performance.now() - started);
    resolve(m);
  };
}

const keyOf = (m: Message) => m.key;

/** A contender set up on a run's input: told how many messages have arrived, stopped at the end. */
interface Running {
  arrive(count: number): void;
  stop(): void;
  /** Messages the pattern has taken from the source so far. */
  taken(): number;
}
type Contender = (input: readonly Message[], done: (m: Message) => void) => Running;

/** The event-loop lanes of both keyedDispatch contenders; made in `main`, so importing this file starts nothing. */
let executor: KeyedExecutor;

function dispatch(options: { maxPerKey?: number; maxParked?: number }): Contender {
  return (input, done) => {
    const receiver = new ScheduleReceiver<Message>(input);
    const subscription = receiver
      .pipe(keyedDispatch({ executor, key: keyOf, handle, maxInFlight: WINDOW, ...options }))
      .subscribe(done);
    return {
      arrive: (count) => receiver.session?.arrive(count),
      stop: () => subscription.unsubscribe(),
      taken: () => receiver.session?.taken ?? 0,
    };
  };
}

const contenders: Record<string, Contender> = {
  shared: dispatch({ maxPerKey: WINDOW, maxParked: WINDOW }),
  share: dispatch({}),
  'share-shallow': dispatch({ maxParked: WINDOW }),
  groupBy(input, done) {
    const subject = new Subject<Message>();
    const subscription = subject
      .pipe(
        groupBy(keyOf),
        mergeMap((g) => g.pipe(concatMap(handle))),
      )
      .subscribe(done);
    let taken = 0;
    return {
      arrive(count) {
        while (taken < count) subject.next(input[taken++]);
      },
      stop: () => subscription.unsubscribe(),
      taken: () => taken,
    };
  },
  chain: (input, done) => openLoopChain(input, keyOf, handle, done, WINDOW),
};

/** An arrival schedule: message i arrives at i / perMs ms after the start (all at once for Infinity). */
interface Schedule {
  readonly input: Message[];
  readonly perMs: number;
  readonly cold: number;
}

function schedule(count: number, perSecond: number, hot: boolean, seed: number): Schedule {
  const next = random(seed);
  const input = new Array<Message>(count);
  let cold = 0;
  for (let seq = 0; seq < count; seq++) {
    const key = hot ? (next() < 0.5 ? HOT : 1 + Math.floor(next() * (KEYS - 1))) : Math.floor(next() * KEYS);
    if (key !== HOT) cold++;
    input[seq] = { key, seq };
  }
  return { input, perMs: perSecond / 1000, cold };
}

/** One run's measures. Latencies in ms; `Infinity` where the percentile's message never finished. */
export interface RunResult {
  coldP50: number;
  coldP99: number;
  coldP999: number;
  /** Share of cold messages unfinished at the end. */
  coldUnfinished: number;
  /** All messages finished per second, over the run. */
  donePerSecond: number;
  /** The hot key's messages finished per second, over the run. */
  hotDonePerSecond: number;
  /** Peak of the heap above its size at the start (after a young-generation collection), sampled every 5 ms. */
  peakHeapMB: number;
  /** Peak of the messages the pattern held: taken from the source and not finished. */
  peakHeld: number;
  /** The run's length, ms. */
  ms: number;
}

const heapUsed = () => getHeapStatistics().used_heap_size;

/**
 * Empties the young generation before a run, so its heap growth starts from the live data. Never a full
 * collection between runs: that frees the hidden classes of the finished run's objects and drops the
 * optimized code with them, and the next run then spent its first ~200 ms recompiling (measured: cold
 * latencies of 100–700 ms in that stretch, 2–3 ms after it, at a quarter of the maximum rate).
 */
function collectYoung(): void {
  (globalThis as { gc?: (options: { type: string }) => void }).gc?.({ type: 'minor' });
}

/**
 * Runs one contender on a schedule: arrivals offered on every event-loop turn (`setImmediate`), each
 * message's latency measured from its scheduled arrival, so a late source or a stalled intake counts.
 * Ends when every cold message has finished (or, with `all`, every message), or `DRAIN_MS` after the
 * last arrival.
 */
function runOnce(contender: Contender, { input, perMs, cold }: Schedule, all = false): Promise<RunResult> {
  const count = input.length;
  const finishedAt = new Float64Array(count).fill(Number.NaN);
  collectYoung();
  const base = heapUsed();
  return new Promise((resolve) => {
    let arrived = 0;
    let coldLeft = cold;
    let left = count;
    let finished = 0;
    let hotFinished = 0;
    let peakHeap = 0;
    let peakHeld = 0;
    let ended = false;
    const start = performance.now();
    const running = contender(input, (m) => {
      if (ended) return;
      finishedAt[m.seq] = performance.now() - start;
      finished++;
      left--;
      if (m.key !== HOT) coldLeft--;
      else hotFinished++;
      if (arrived === count && (all ? left === 0 : coldLeft === 0)) end();
    });
    const sample = () => {
      peakHeap = Math.max(peakHeap, heapUsed() - base);
      peakHeld = Math.max(peakHeld, running.taken() - finished);
    };
    const sampler = setInterval(sample, 5);
    // A closed-loop run (`all`) ends only when everything has finished (a minute at most).
    const deadline = setTimeout(() => end(), all ? 60_000 : (count - 1) / perMs + DRAIN_MS);
    function end(): void {
      if (ended) return;
      sample();
      ended = true;
      const ms = performance.now() - start;
      clearInterval(sampler);
      clearTimeout(deadline);
      running.stop();
      const latencies = new Float64Array(cold);
      let c = 0;
      let unfinished = 0;
      for (let i = 0; i < count; i++) {
        if (input[i].key === HOT) continue;
        const at = finishedAt[i];
        if (Number.isNaN(at)) unfinished++;
        latencies[c++] = Number.isNaN(at)
          ? Number.POSITIVE_INFINITY
          : at - (Number.isFinite(perMs) ? i / perMs : 0);
      }
      latencies.sort();
      const result: RunResult = {
        coldP50: percentile(latencies, 50),
        coldP99: percentile(latencies, 99),
        coldP999: percentile(latencies, 99.9),
        coldUnfinished: unfinished / cold,
        donePerSecond: (finished * 1000) / ms,
        hotDonePerSecond: (hotFinished * 1000) / ms,
        peakHeapMB: peakHeap / 1e6,
        peakHeld,
        ms,
      };
      // Handlers of the stopped run still pending (at most ~1 ms each) run out before the next run.
      setTimeout(() => resolve(result), 50);
    }
    paceArrivals(
      count,
      perMs,
      start,
      (due) => {
        arrived = due;
        running.arrive(due);
        if (arrived === count && (all ? left === 0 : coldLeft === 0)) end();
      },
      () => ended,
    );
  });
}

/** What the child prints. */
export interface HotKeyResults {
  /** Closed-loop maximum (all messages available at once, uniform keys), msgs/s per round, per contender. */
  max: Record<string, number[]>;
  /** Handler durations measured during keyedDispatch's maximum runs, ms: medians and 99th percentiles. */
  handlerMs: { immediateP50: number; immediateP99: number; timeoutP50: number; timeoutP99: number };
  /** The offered rates, msgs/s, and which one is the target (160 k/s, or 50 % of the maximum). */
  rates: number[];
  targetRate: number;
  /** `${contender}:${rate}:${hot|uniform}` → one result per round. */
  runs: Record<string, RunResult[]>;
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 5);
  executor = new KeyedExecutor();
  const ids = CONTENDERS.map(([id]) => id);
  /** Contenders in a different order each round, so none always runs first or right after another. */
  const rotated = (r: number) => ids.map((_, i) => ids[(i + r) % ids.length]);

  // Warm-up: every contender, both modes, a short run at a moderate rate.
  collect();
  for (const id of ids) {
    for (const hot of [false, true]) await runOnce(contenders[id], schedule(20_000, 100_000, hot, 1));
  }

  // The maximum throughput: closed loop, uniform keys, all messages available at once.
  const maxInput = schedule(MAX_RUN_MESSAGES, Number.POSITIVE_INFINITY, false, 2);
  const max: Record<string, number[]> = Object.fromEntries(ids.map((id) => [id, []]));
  for (let r = 0; r < rounds; r++) {
    for (const id of rotated(r)) {
      timing.on = id === 'share';
      const run = await runOnce(contenders[id], maxInput, true);
      timing.on = false;
      max[id].push((MAX_RUN_MESSAGES * 1000) / run.ms);
    }
  }
  const sorted = (xs: number[]) => Float64Array.from(xs).sort();
  const handlerMs = {
    immediateP50: percentile(sorted(timing.immediate), 50),
    immediateP99: percentile(sorted(timing.immediate), 99),
    timeoutP50: percentile(sorted(timing.timeout), 50),
    timeoutP99: percentile(sorted(timing.timeout), 99),
  };
  timing.immediate = [];
  timing.timeout = [];
  const top = median(max.share);
  const rates = FRACTIONS.map((f) => Math.round((top * f) / 1000) * 1000);
  if (TARGET_RATE < top && !rates.includes(TARGET_RATE)) rates.push(TARGET_RATE);
  rates.sort((a, b) => a - b);
  const targetRate = TARGET_RATE < top ? TARGET_RATE : (rates[1] as number);
  console.error(
    `max msgs/s: ${ids.map((id) => `${id} ${Math.round(median(max[id]))}`).join(', ')}; rates ${rates.join(', ')}`,
  );

  const schedules = new Map<string, Schedule>();
  for (const rate of rates) {
    for (const hot of [false, true]) {
      schedules.set(
        `${rate}:${hot}`,
        schedule(Math.round((rate * ARRIVAL_MS) / 1000), rate, hot, rate + +hot),
      );
    }
  }
  // Once, before the measured runs: the schedules' garbage. Then a run of each contender, recompiling.
  collect();
  for (const id of ids) await runOnce(contenders[id], schedule(20_000, 100_000, false, 3));
  const runs: Record<string, RunResult[]> = {};
  for (let r = 0; r < rounds; r++) {
    for (const rate of rates) {
      for (const hot of [false, true]) {
        for (const id of rotated(r)) {
          const result = await runOnce(contenders[id], schedules.get(`${rate}:${hot}`) as Schedule);
          const key = `${id}:${rate}:${hot ? 'hot' : 'uniform'}`;
          (runs[key] ??= []).push(result);
          console.error(
            `round ${r + 1} ${key}: p99 ${result.coldP99.toFixed(2)} ms, unfinished ${(result.coldUnfinished * 100).toFixed(1)} %, ${Math.round(result.ms)} ms`,
          );
        }
      }
    }
  }
  await executor.close();
  const results: HotKeyResults = { max, handlerMs, rates, targetRate, runs };
  // Infinity is not JSON: unfinished percentiles travel as null.
  console.log(JSON.stringify(results, (_, v) => (v === Number.POSITIVE_INFINITY ? null : v)));
  process.exit(0);
}

if (require.main === module) void main();
