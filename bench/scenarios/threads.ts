import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundle, runChild, type Scenario } from '../lib';
import { barChart, saveChart } from '../svg';
import { HANDLERS } from '../threads-common';
import type { ThreadsMedians } from './threads-child';

const buildThreadWorker: () => Promise<unknown> = require('../../scripts/build-thread-worker.js');

const scenario: Scenario = {
  title: 'thread lanes: CPU-bound scaling and the cost of the thread boundary',
  async run() {
    // Measured as the package ships: the library bundled (as tsup builds dist/), with the worker script
    // next to the bundle (as dist/thread-worker.js is), in a fresh process. The handler module is
    // passed by path: the bundle lives elsewhere.
    await buildThreadWorker();
    const child = bundle('scenarios/threads-child.ts');
    copyFileSync(
      join(__dirname, '..', '..', '.build', 'thread-worker.js'),
      join(child, '..', 'thread-worker.js'),
    );
    process.env.THREADS_BENCH_HANDLERS = HANDLERS;
    const { markdown, medians } = runChild<{ markdown: string; medians: ThreadsMedians }>(child, []);
    const chart = (title: string, rows: Array<[string, number]>) =>
      barChart({
        title,
        categories: rows.map(([name]) => shortName(name)),
        series: [{ name: 'msgs/s (median)', values: rows.map(([, value]) => value) }],
        yLabel: 'messages / s',
      });
    const cpu = saveChart(
      'threads-cpu-bound',
      chart('(a) ~50 µs CPU-bound handler, 20,000 messages', medians.a),
      'CPU-bound throughput by contender',
    );
    const boundary = saveChart(
      'threads-boundary',
      chart('(b) trivial handler, 200,000 messages', medians.b),
      'trivial-handler throughput by contender',
    );
    return `${cpu}\n\n${boundary}\n\n${markdown}`;
  },
};

/** A contender's label for a chart (the full names are in the tables): its first words and its window. */
function shortName(name: string): string {
  if (name.startsWith('2 bare')) return '2 bare workers (ceiling)';
  const window = /maxInFlight (\d+)/.exec(name);
  return window ? `${name.split(',')[0]}, window ${window[1]}` : name.split(',')[0];
}

export default scenario;
