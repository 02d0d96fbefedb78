import { join } from 'node:path';
import { lastValueFrom } from 'rxjs';
import { fromIterable, type KeyedExecutor, keyedDispatch, ThreadExecutor, threadHandler } from '../src';
import { collect, median, minMax, rate } from './lib';

// What the thread-lane scenarios share: the handler module, calibrated CPU work, and round-robin runs.

/** The handlers, a plain CommonJS module (threads load it; Node runs no TypeScript in a worker). */
export const HANDLERS = process.env.THREADS_BENCH_HANDLERS ?? join(__dirname, 'handlers', 'threads.js');
export const local: Record<string, (m: Message) => number[]> = require(HANDLERS);
export const RUNS = 5;
/**
 * Warm-up runs per contender before measuring. Threads compile the handler and the engine on their own,
 * and reach their steady rate only after about three runs of 20,000 messages (measured: 25k, 32k, then
 * 36k msgs/s and flat); the event-loop lane is warm from the calibration already.
 */
export const WARMUPS = 3;

export interface Message {
  key: number;
  n: number;
  iterations: number;
}

export function messages(count: number, keys: number, iterations: number): Message[] {
  return Array.from({ length: count }, (_, n) => ({ key: n % keys, n, iterations }));
}

/** Hash rounds that take about `targetUs` on this thread. */
export function calibrate(targetUs: number): number {
  // Warm the hash up first, so the calibration measures optimized code (as the runs will).
  for (let n = 0; n < 50_000; n++) local.price({ key: 0, n, iterations: 1000 });
  let iterations = 1000;
  for (;;) {
    const started = performance.now();
    for (let n = 0; n < 2000; n++) local.price({ key: 0, n, iterations });
    const us = ((performance.now() - started) * 1000) / 2000;
    if (us > 5) return Math.round((iterations * targetUs) / us);
    iterations *= 4;
  }
}

/** Drains `batch` through keyedDispatch; returns msgs/s. */
export async function dispatch(
  batch: Message[],
  executor: KeyedExecutor | ThreadExecutor,
  name: string,
  maxInFlight: number,
): Promise<number> {
  const handle =
    executor instanceof ThreadExecutor ? threadHandler<Message, number>(HANDLERS, name) : local[name];
  const started = performance.now();
  await lastValueFrom(
    fromIterable(batch).pipe(
      keyedDispatch<Message, number, number>({ executor, key: (m) => m.key, handle, maxInFlight }),
    ),
    { defaultValue: 0 },
  );
  return (batch.length * 1000) / (performance.now() - started);
}

/**
 * Median and range of `runs` measurements taken round-robin over the contenders. Each measured run
 * follows a full collection and one untimed run of the same contender. The collection keeps one
 * contender's garbage out of the next one's run, but it also frees the hidden classes of the previous
 * run's objects, and with them the main thread's optimized code, which is then compiled again on V8's
 * helper threads. On a 2-core machine that compilation competes with the worker threads (measured:
 * 25–35 ms of CPU per run, about 1 % of the thread lanes' rate) while a one-lane contender leaves a
 * core idle for it, so the untimed run takes it out of the measurement for every contender.
 */
export async function compare(
  contenders: Array<[string, () => Promise<number>]>,
): Promise<Map<string, number[]>> {
  const results = new Map<string, number[]>(contenders.map(([name]) => [name, []]));
  for (let w = 0; w < WARMUPS; w++) for (const [, run] of contenders) await run();
  for (let r = 0; r < RUNS; r++) {
    for (const [name, run] of contenders) {
      collect();
      await run();
      results.get(name)?.push(await run());
    }
  }
  return results;
}

export function row(name: string, values: number[], baseline: number): Array<string | number> {
  const [lo, hi] = minMax(values);
  const m = median(values);
  return [
    name,
    rate(m),
    `${rate(lo)} – ${rate(hi)}`,
    `${(1e6 / m).toFixed(2)} µs`,
    `${(m / baseline).toFixed(2)}×`,
  ];
}
