// The latency scenario, in one fresh process (see latency.ts): `latency-child [rounds]`. Every contender
// runs here, alternating, on the same open-loop schedules. Prints `LatencyResults` as JSON on its last line.
import { concatMap, type GroupedObservable, groupBy, mergeMap, Subject } from 'rxjs';
import { KeyedExecutor, keyedDispatch } from '../../src';
import { collect, median } from '../lib';
import { openLoopChain, paceArrivals, percentile, random, ScheduleReceiver } from '../open-loop';

interface Message {
  readonly key: number;
  /** Index in the schedule. */
  readonly seq: number;
}

export const KEYS = 1_000;
export const WINDOW = 256;
/** Messages of the closed-loop runs that measure keyedDispatch's maximum throughput. */
export const MAX_MESSAGES = 300_000;
/** Offered rates, as fractions of that maximum. */
export const FRACTIONS = [0.5, 0.9];
/** Arrivals last this long; a run then waits for every message to finish (at most `DRAIN_MS` more). */
export const ARRIVAL_MS = 400;
export const DRAIN_MS = 5_000;

export const CONTENDERS: Array<[string, string]> = [
  ['ours', 'keyedDispatch (pulled source, window 256)'],
  ['chain', 'hand-written per-key promise chain, 256 unfinished'],
  ['groupBy', '`groupBy` + `mergeMap(concatMap)` (Subject, unbounded)'],
];

const handle = async (m: Message) => m;
const keyOf = (m: Message) => m.key;

/** A contender on a run's input: told how many messages have arrived, stopped at the end. */
interface Running {
  arrive(count: number): void;
  stop(): void;
}
type Contender = (input: readonly Message[], done: (m: Message) => void) => Running;

let executor: KeyedExecutor;

const contenders: Record<string, Contender> = {
  ours(input, done) {
    const receiver = new ScheduleReceiver<Message>(input);
    const subscription = receiver
      .pipe(keyedDispatch({ executor, key: keyOf, handle, maxInFlight: WINDOW }))
      .subscribe(done);
    return { arrive: (count) => receiver.session?.arrive(count), stop: () => subscription.unsubscribe() };
  },
  chain: (input, done) => openLoopChain(input, keyOf, handle, done, WINDOW),
  groupBy(input, done) {
    const subject = new Subject<Message>();
    const subscription = subject
      .pipe(
        groupBy(keyOf),
        mergeMap((g: GroupedObservable<number, Message>) => g.pipe(concatMap(handle))),
      )
      .subscribe(done);
    let taken = 0;
    return {
      arrive(count) {
        while (taken < count) subject.next(input[taken++]);
      },
      stop: () => subscription.unsubscribe(),
    };
  },
};

function schedule(count: number, seed: number): Message[] {
  const next = random(seed);
  return Array.from({ length: count }, (_, seq) => ({ key: Math.floor(next() * KEYS), seq }));
}

/** One run's completion − arrival latencies, ms (Infinity where a message did not finish). */
export interface RunResult {
  p50: number;
  p99: number;
  p999: number;
  unfinished: number;
  /** The run's length, ms. */
  ms: number;
}

/** Runs a contender on `input` arriving at `perMs` messages a ms (all at once for Infinity). */
function runOnce(contender: Contender, input: readonly Message[], perMs: number): Promise<RunResult> {
  const count = input.length;
  const finishedAt = new Float64Array(count).fill(Number.NaN);
  return new Promise((resolve) => {
    let left = count;
    let ended = false;
    const start = performance.now();
    const running = contender(input, (m) => {
      if (ended) return;
      finishedAt[m.seq] = performance.now() - start;
      if (--left === 0) end();
    });
    const deadline = setTimeout(() => end(), Number.isFinite(perMs) ? count / perMs + DRAIN_MS : 60_000);
    function end(): void {
      if (ended) return;
      ended = true;
      const ms = performance.now() - start;
      clearTimeout(deadline);
      running.stop();
      const latencies = new Float64Array(count);
      for (let i = 0; i < count; i++) {
        const at = finishedAt[i];
        const arrival = Number.isFinite(perMs) ? i / perMs : 0;
        latencies[i] = Number.isNaN(at) ? Number.POSITIVE_INFINITY : at - arrival;
      }
      latencies.sort();
      const result = {
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        p999: percentile(latencies, 99.9),
        unfinished: left / count,
        ms,
      };
      setImmediate(() => resolve(result));
    }
    paceArrivals(
      count,
      perMs,
      start,
      (due) => running.arrive(due),
      () => ended,
    );
  });
}

/** What the child prints. */
export interface LatencyResults {
  /** keyedDispatch's closed-loop msgs/s (Promise handler, 1,000 keys), per round. */
  max: number[];
  /** Offered rates, msgs/s, by fraction. */
  rates: number[];
  /** `${contender}:${rate}` → one result per round. */
  runs: Record<string, RunResult[]>;
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 5);
  executor = new KeyedExecutor();
  const ids = CONTENDERS.map(([id]) => id);
  const rotated = (r: number) => ids.map((_, i) => ids[(i + r) % ids.length]);
  const closed = schedule(MAX_MESSAGES, 1);
  collect();
  // Warm-up: every contender closed-loop once, then a paced run.
  for (const id of ids) await runOnce(contenders[id], closed, Number.POSITIVE_INFINITY);
  for (const id of ids) await runOnce(contenders[id], schedule(50_000, 2), 100);
  const max: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const run = await runOnce(contenders.ours, closed, Number.POSITIVE_INFINITY);
    max.push((MAX_MESSAGES * 1000) / run.ms);
  }
  const top = median(max);
  const rates = FRACTIONS.map((f) => Math.round((top * f) / 1000) * 1000);
  const inputs = rates.map((rate, i) => schedule(Math.round((rate * ARRIVAL_MS) / 1000), 3 + i));
  const runs: Record<string, RunResult[]> = {};
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < rates.length; i++) {
      for (const id of rotated(r)) {
        const result = await runOnce(contenders[id], inputs[i], rates[i] / 1000);
        (runs[`${id}:${rates[i]}`] ??= []).push(result);
        console.error(`round ${r + 1} ${id} at ${rates[i]}/s: p99 ${result.p99.toFixed(2)} ms`);
      }
    }
  }
  await executor.close();
  console.log(JSON.stringify({ max, rates, runs }, (_, v) => (v === Number.POSITIVE_INFINITY ? null : v)));
  process.exit(0);
}

if (require.main === module) void main();
