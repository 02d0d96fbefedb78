import { availableParallelism, loadavg } from 'node:os';
import { KeyedExecutor, ThreadExecutor } from '../../src';
import { median, type Scenario, table } from '../lib';
import { calibrate, compare, dispatch, messages, RUNS, row, WARMUPS } from '../threads-common';

/** 1, 2, 4, ... threads up to the machine's processors (and the processor count itself). */
function threadCounts(): number[] {
  const cores = availableParallelism();
  const counts: number[] = [];
  for (let n = 1; n < cores; n *= 2) counts.push(n);
  counts.push(cores);
  return counts;
}

const scenario: Scenario = {
  title: 'thread lanes: CPU-bound scaling with the number of threads',
  async run(args) {
    // A bare benchmark host without the build tools passes `prebuilt` (the worker script is already built).
    if (args[0] !== 'prebuilt') await require('../../scripts/build-thread-worker.js')();
    const iterations = calibrate(50);
    const cpu = messages(100_000, 1_000, iterations);
    const oneLane = new KeyedExecutor({ workers: 1 });
    const executors = threadCounts().map((n) => [n, new ThreadExecutor({ workers: n })] as const);
    const baseline = 'event-loop lanes, 1 lane';
    const results = await compare([
      [baseline, () => dispatch(cpu, oneLane, 'price', 1024)],
      ...executors.map(
        ([n, executor]) =>
          [`thread lanes, ${n} thread${n > 1 ? 's' : ''}`, () => dispatch(cpu, executor, 'price', 1024)] as [
            string,
            () => Promise<number>,
          ],
      ),
    ]);
    for (const [, executor] of executors) await executor.close();
    await oneLane.close();
    const base = median(results.get(baseline) ?? []);
    const rows = [...results].map(([name, values]) => row(name, values, base));
    const load = loadavg()
      .map((l) => l.toFixed(1))
      .join(' / ');
    const text =
      `CPU-bound handler (~50 µs: ${iterations} hash rounds), 100,000 messages over 1,000 keys, maxInFlight 1024. ` +
      `Medians of ${RUNS} runs per contender, round-robin after ${WARMUPS} warm-up runs each; load average at the end ` +
      `${load} on ${availableParallelism()} cores.\n\n` +
      table(['contender', 'msgs/s (median)', 'range', 'per message', 'vs one event-loop lane'], rows);
    console.log(text);
    return text;
  },
};

export default scenario;
