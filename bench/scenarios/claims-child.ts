// The claims scenario, run in a fresh process from a bundle (see claims.ts): `claims-child <pairs>`.
// Measures contested figures side by side in this one process, the two contenders of each alternating
// (the order swapped in every other pair), and prints `ClaimsResults` as JSON on its last line.
import { fromIterable, KeyedExecutor, keyedDispatch, ThreadExecutor } from '../../src';
import { handMailboxLoop } from '../baselines/hand-mailbox';
import { collect } from '../lib';
import { calibrate, dispatch, messages } from '../threads-common';

/** Per pair: the first contender's msgs/s, the second's, and the figure the pair gives. */
export interface Pair {
  a: number;
  b: number;
  value: number;
}

export interface ClaimsResults {
  /** keyedDispatch ([m] handler) msgs/s / the hand-written loop's, 1,000 keys. */
  handLoop: Pair[];
  /** Thread lanes (2 threads) msgs/s / one event-loop lane's, ~50 µs CPU-bound handler. */
  threads: Pair[];
  iterations: number;
  /** The thread boundary per message, µs: 1 / thread lane's rate − 1 / event-loop lane's, by window. */
  boundary: Record<string, Pair[]>;
}

interface Message {
  key: number;
  seq: number;
}

const CORE_MESSAGES = 1_000_000;
export const CORE_KEYS = 1_000;
export const CPU_MESSAGES = 20_000;
export const CPU_KEYS = 100;
export const TRIVIAL_MESSAGES = 200_000;
export const TRIVIAL_KEYS = 1_000;
export const WINDOWS = [256, 4096];

/**
 * Alternating pairs of `a` and `b`: every other pair runs `b` first, so being second (which can be a
 * little slower or faster, whatever runs) is charged to neither. With `fresh`, each measured run follows
 * a full collection and one untimed run of the same contender, as the threads scenario does (see
 * `compare` in threads-common.ts): the collection keeps one contender's garbage out of the other's run.
 */
async function pairs(
  count: number,
  a: () => Promise<number>,
  b: () => Promise<number>,
  value: (a: number, b: number) => number,
  fresh: boolean,
): Promise<Pair[]> {
  const measure = async (run: () => Promise<number>) => {
    if (fresh) {
      collect();
      await run();
    }
    return run();
  };
  for (let w = 0; w < 2; w++) {
    await a();
    await b();
  }
  const out: Pair[] = [];
  for (let p = 0; p < count; p++) {
    let ra: number;
    let rb: number;
    if (p % 2 === 0) {
      ra = await measure(a);
      rb = await measure(b);
    } else {
      rb = await measure(b);
      ra = await measure(a);
    }
    out.push({ a: ra, b: rb, value: value(ra, rb) });
  }
  return out;
}

/** keyedDispatch, handler returning [m], as in the core scenario; msgs/s. */
function ours(input: Message[], executor: KeyedExecutor): Promise<number> {
  return new Promise((resolve, reject) => {
    let n = 0;
    const started = performance.now();
    fromIterable(input)
      .pipe(keyedDispatch({ key: (m: Message) => m.key, handle: (m: Message) => [m], executor }))
      .subscribe({
        next: () => n++,
        error: reject,
        complete: () => {
          if (n !== input.length) reject(new Error(`keyedDispatch handled ${n} of ${input.length}`));
          resolve((n * 1000) / (performance.now() - started));
        },
      });
  });
}

/** The hand-written Map-of-queues loop of the core scenario; msgs/s. */
async function hand(input: Message[]): Promise<number> {
  let n = 0;
  const started = performance.now();
  handMailboxLoop(
    input[Symbol.iterator](),
    (m: Message) => m.key,
    () => n++,
  );
  if (n !== input.length) throw new Error(`hand-written loop handled ${n} of ${input.length}`);
  return (n * 1000) / (performance.now() - started);
}

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 12);

  // (a) keyedDispatch [m] vs the hand-written loop, 1,000,000 messages over 1,000 keys. Back to back,
  // no forced collection (as the core scenario measures: a forced collection drops optimized code).
  const input: Message[] = Array.from({ length: CORE_MESSAGES }, (_, seq) => ({ key: seq % CORE_KEYS, seq }));
  const executor = new KeyedExecutor();
  collect();
  const handLoop = await pairs(
    count,
    () => ours(input, executor),
    () => hand(input),
    (a, b) => a / b,
    false,
  );
  console.error(`(a) ${handLoop.map((p) => p.value.toFixed(3)).join(' ')}`);

  // (b) Thread lanes (2 threads) vs one event-loop lane, ~50 µs CPU-bound handler.
  const iterations = calibrate(50);
  const cpu = messages(CPU_MESSAGES, CPU_KEYS, iterations);
  const oneLane = new KeyedExecutor({ workers: 1 });
  const twoThreads = new ThreadExecutor({ workers: 2 });
  // Threads reach their steady rate after about three runs (see WARMUPS in threads-common.ts).
  for (let w = 0; w < 3; w++) await dispatch(cpu, twoThreads, 'price', 256);
  const threads = await pairs(
    Math.max(4, count >> 1),
    () => dispatch(cpu, twoThreads, 'price', 256),
    () => dispatch(cpu, oneLane, 'price', 256),
    (a, b) => a / b,
    true,
  );
  console.error(`(b) ${threads.map((p) => p.value.toFixed(3)).join(' ')}`);
  await twoThreads.close();

  // (c) The thread boundary: trivial handler on one thread lane vs one event-loop lane, same window.
  const trivial = messages(TRIVIAL_MESSAGES, TRIVIAL_KEYS, 0);
  const oneThread = new ThreadExecutor({ workers: 1 });
  for (let w = 0; w < 3; w++) await dispatch(trivial, oneThread, 'trivial', 4096);
  const boundary: Record<string, Pair[]> = {};
  for (const window of WINDOWS) {
    boundary[window] = await pairs(
      count,
      () => dispatch(trivial, oneThread, 'trivial', window),
      () => dispatch(trivial, oneLane, 'trivial', window),
      (a, b) => 1e6 / a - 1e6 / b,
      true,
    );
    console.error(`(c) ${window}: ${boundary[window].map((p) => p.value.toFixed(2)).join(' ')}`);
  }
  await oneThread.close();
  await oneLane.close();
  await executor.close();
  const results: ClaimsResults = { handLoop, threads, iterations, boundary };
  console.log(JSON.stringify(results));
  process.exit(0);
}

if (require.main === module) void main();
