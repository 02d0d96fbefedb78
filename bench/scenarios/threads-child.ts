// The threads scenario, run in a fresh process from a bundle (see threads.ts): `threads-child`.
// Prints `{ "markdown": ..., "medians": ... }` on its last line (the parent draws the charts).
import { availableParallelism, loadavg } from 'node:os';
import { Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { KeyedExecutor, ThreadExecutor } from '../../src';
import { median, table } from '../lib';
import {
  calibrate,
  compare,
  dispatch,
  HANDLERS,
  type Message,
  messages,
  RUNS,
  row,
  WARMUPS,
} from '../threads-common';

/** Runs `batch` on piscina with `outstanding` tasks in flight (it gives no ordering); returns msgs/s. */
async function piscina(pool: Piscina, batch: Message[], outstanding: number): Promise<number> {
  const started = performance.now();
  let next = 0;
  const lane = async () => {
    while (next < batch.length) await pool.run(batch[next++], { name: 'trivial' });
  };
  await Promise.all(Array.from({ length: outstanding }, lane));
  return (batch.length * 1000) / (performance.now() - started);
}

/**
 * The ceiling of (a): two bare worker threads, each hashing its half of the messages in one loop (no
 * keys, no window, no batches), started together; returns msgs/s.
 */
function bareWorkers(): (batch: Message[]) => Promise<number> {
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { price } = require(workerData);
    parentPort.on('message', (batch) => {
      for (const m of batch) price(m);
      parentPort.postMessage(batch.length);
    });`;
  const workers = [0, 1].map(() => new Worker(source, { eval: true, workerData: HANDLERS }));
  for (const w of workers) w.unref();
  const run = (w: Worker, part: Message[]) =>
    new Promise<void>((resolve) => {
      w.once('message', () => resolve());
      w.postMessage(part);
    });
  return async (batch) => {
    const half = batch.length >> 1;
    const parts = [batch.slice(0, half), batch.slice(half)];
    const started = performance.now();
    await Promise.all(workers.map((w, i) => run(w, parts[i])));
    return (batch.length * 1000) / (performance.now() - started);
  };
}

/** The median msgs/s of each contender of (a) and of (b), for the charts. */
export interface ThreadsMedians {
  readonly a: Array<[string, number]>;
  readonly b: Array<[string, number]>;
}

/** Runs both comparisons; returns the Markdown section and each contender's median. */
async function measure(): Promise<{ markdown: string; medians: ThreadsMedians }> {
  const sections: string[] = [];
  const header = ['contender', 'msgs/s (median)', 'range', 'per message', 'vs first row'];

  // (a) CPU-bound handler of ~50 µs, 20,000 messages over 100 keys.
  const iterations = calibrate(50);
  const cpu = messages(20_000, 100, iterations);
  const oneLane = new KeyedExecutor({ workers: 1 });
  const twoThreads = new ThreadExecutor({ workers: 2 });
  const bare = bareWorkers();
  const a = await compare([
    ['event-loop lanes, 1 lane', () => dispatch(cpu, oneLane, 'price', 256)],
    ['thread lanes, 2 threads', () => dispatch(cpu, twoThreads, 'price', 256)],
    ['2 bare worker threads hashing their half in a loop (no keys, no window): the ceiling', () => bare(cpu)],
  ]);
  const aBase = median(a.get('event-loop lanes, 1 lane') ?? []);
  const aRows = [...a].map(([name, values]) => row(name, values, aBase));
  const speedup = median(a.get('thread lanes, 2 threads') ?? []) / aBase;
  sections.push(
    `### (a) CPU-bound handler (~50 µs: ${iterations} hash rounds), 20,000 messages, 100 keys, maxInFlight 256\n\n${table(header, aRows)}\n\n` +
      `Thread lanes (2 threads) vs one event-loop lane: **${speedup.toFixed(2)}×** (ratio of the medians above; target ≥ 1.8×: ${speedup >= 1.8 ? 'met' : 'missed'} by this measure; measured side by side in alternating pairs, see \`claims\`).` +
      ' The bare workers include the time to clone their half of the messages to the thread.',
  );
  console.error(sections[sections.length - 1]);

  // (b) Trivial handler, 200,000 messages over 1,000 keys: the cost of the thread boundary.
  const trivial = messages(200_000, 1_000, 0);
  const pool = new Piscina({ filename: HANDLERS, minThreads: 2, maxThreads: 2 });
  const b = await compare([
    ['piscina 5, 2 threads, 256 tasks outstanding (no ordering)', () => piscina(pool, trivial, 256)],
    ['thread lanes, 2 threads, maxInFlight 256', () => dispatch(trivial, twoThreads, 'trivial', 256)],
    ['thread lanes, 2 threads, maxInFlight 4096', () => dispatch(trivial, twoThreads, 'trivial', 4096)],
    [
      'event-loop lanes, 1 lane, maxInFlight 4096 (no thread boundary)',
      () => dispatch(trivial, oneLane, 'trivial', 4096),
    ],
  ]);
  await pool.destroy();
  const bBase = median(b.get('piscina 5, 2 threads, 256 tasks outstanding (no ordering)') ?? []);
  const bRows = [...b].map(([name, values]) => row(name, values, bBase));
  const best = Math.max(
    median(b.get('thread lanes, 2 threads, maxInFlight 256') ?? []),
    median(b.get('thread lanes, 2 threads, maxInFlight 4096') ?? []),
  );
  const loop = median(b.get('event-loop lanes, 1 lane, maxInFlight 4096 (no thread boundary)') ?? []);
  const boundaryUs = 1e6 / best - 1e6 / loop;
  sections.push(
    `### (b) Trivial handler, 200,000 messages, 1,000 keys\n\n${table(header, bRows)}\n\n` +
      `Best thread lanes vs piscina: **${(best / bBase).toFixed(2)}×** (target ≥ 8×: ${best / bBase >= 8 ? 'met' : 'missed'}). ` +
      `Per-message cost of the thread boundary (best thread lanes minus event-loop lanes, main-thread wall time): ` +
      `**${boundaryUs.toFixed(2)} µs** (from the medians above; one thread lane vs one event-loop lane side by side, ` +
      'in alternating pairs: see `claims`).',
  );
  console.error(sections[sections.length - 1]);

  await twoThreads.close();
  await oneLane.close();
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(' / ');
  const markdown =
    `Medians of ${RUNS} runs per contender, run round-robin after ${WARMUPS} warm-up runs each; each ` +
    'measured run follows a full collection and one untimed run of the same contender (see `compare`). ' +
    `Load average at the end (1 / 5 / 15 min): ${load} on ${availableParallelism()} cores; a load above the core count ` +
    `means other processes shared the CPUs and the ratios are less reliable.\n\n${sections.join('\n\n')}`;
  const medians = (results: Map<string, number[]>): Array<[string, number]> =>
    [...results].map(([name, values]) => [name, median(values)]);
  return { markdown, medians: { a: medians(a), b: medians(b) } };
}

measure().then(
  (result) => console.log(JSON.stringify(result)),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
