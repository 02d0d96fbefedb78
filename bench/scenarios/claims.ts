import { copyFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { bundle, median, minMax, rate, runChild, type Scenario, table } from '../lib';
import { HANDLERS } from '../threads-common';
import {
  type ClaimsResults,
  CORE_KEYS,
  CPU_KEYS,
  CPU_MESSAGES,
  type Pair,
  TRIVIAL_KEYS,
  TRIVIAL_MESSAGES,
  WINDOWS,
} from './claims-child';

const buildThreadWorker: () => Promise<unknown> = require('../../scripts/build-thread-worker.js');

/** Fresh processes; each measures every figure in alternating pairs. */
const PROCESSES = 3;
/** Alternating pairs per process for (a) and (c); (b) takes half as many (a run takes about a second). */
const PAIRS = 12;

/** What these figures replace, and how those were measured. */
const EARLIER =
  'These figures were stated before from runs measured otherwise, and independent side-by-side runs did not ' +
  'reproduce them: (a) 106 % (ratio of the medians of separate fresh processes, `core`), (b) 1.84× and (c) ' +
  '0.72 µs (ratios of the medians of round-robin runs, `threads`; (c) took the better of two 2-thread windows).';

const scenario: Scenario = {
  title: 'contested figures, measured side by side: the hand-written loop, thread lanes, the thread boundary',
  async run(args) {
    const processes = Number(args[0] ?? PROCESSES);
    const count = Number(args[1] ?? PAIRS);
    // As the threads scenario runs: the library bundled, the worker script next to the bundle.
    await buildThreadWorker();
    const child = bundle('scenarios/claims-child.ts');
    copyFileSync(
      join(__dirname, '..', '..', '.build', 'thread-worker.js'),
      join(child, '..', 'thread-worker.js'),
    );
    process.env.THREADS_BENCH_HANDLERS = HANDLERS;
    const results: ClaimsResults[] = [];
    for (let p = 0; p < processes; p++) results.push(runChild<ClaimsResults>(child, [String(count)]));

    /** Median over all pairs of all processes, their min – max, and each process's median. */
    const summary = (pick: (r: ClaimsResults) => Pair[], show: (v: number) => string) => {
      const all = results.flatMap((r) => pick(r).map((x) => x.value));
      const [lo, hi] = minMax(all);
      const perProcess = results.map((r) => show(median(pick(r).map((x) => x.value))));
      return {
        median: median(all),
        cell: [show(median(all)), `${show(lo)} – ${show(hi)}`, perProcess.join(', ')],
      };
    };
    const rates = (pick: (r: ClaimsResults) => Pair[], side: 'a' | 'b') =>
      rate(median(results.flatMap((r) => pick(r).map((x) => x[side]))));
    const pct = (v: number) => `${(v * 100).toFixed(0)} %`;
    const times = (v: number) => `${v.toFixed(2)}×`;
    const us = (v: number) => `${v.toFixed(2)} µs`;

    const a = summary((r) => r.handLoop, pct);
    const b = summary((r) => r.threads, times);
    const c = WINDOWS.map((w) => summary((r) => r.boundary[w], us));
    const rows = [
      [
        `(a) keyedDispatch, handler returns [m] / hand-written Map-of-queues loop; 1,000,000 messages, ${CORE_KEYS.toLocaleString('en-US')} keys (msgs/s: ${rates((r) => r.handLoop, 'a')} / ${rates((r) => r.handLoop, 'b')})`,
        ...a.cell,
      ],
      [
        `(b) thread lanes, 2 threads / one event-loop lane; ~50 µs CPU-bound handler (${results[0].iterations} hash rounds), ${CPU_MESSAGES.toLocaleString('en-US')} messages, ${CPU_KEYS} keys, maxInFlight 256 (msgs/s: ${rates((r) => r.threads, 'a')} / ${rates((r) => r.threads, 'b')})`,
        ...b.cell,
      ],
      ...WINDOWS.map((w, i) => [
        `(c) thread boundary per message: 1 / rate of one thread lane − 1 / rate of one event-loop lane; trivial handler, ${TRIVIAL_MESSAGES.toLocaleString('en-US')} messages, ${TRIVIAL_KEYS.toLocaleString('en-US')} keys, maxInFlight ${w} (msgs/s: ${rates((r) => r.boundary[w], 'a')} / ${rates((r) => r.boundary[w], 'b')})`,
        ...c[i].cell,
      ]),
    ];
    const load = loadavg()
      .map((l) => l.toFixed(1))
      .join(' / ');
    const text =
      `Each figure is measured side by side in one process: its two contenders alternate, in pairs, the order ` +
      `swapped in every other pair, after two warm-up runs of each; the figure is computed per pair and the ` +
      `median taken over all pairs of ${processes} fresh processes (${count} pairs each for (a) and (c), ` +
      `${Math.max(4, count >> 1)} for (b)). (a) runs back to back with no forced collection, as the core scenario ` +
      'does; in (b) and (c) each measured run follows a full collection and one untimed run of the same contender, ' +
      'as the threads scenario does. The library is bundled, with the thread worker next to it, as the package ' +
      `ships. Load average at the end (1 / 5 / 15 min): ${load} on ${availableParallelism()} cores.\n\n` +
      `${EARLIER}\n\n` +
      table(
        ['figure (contenders: first / second)', 'median of pairs', 'min – max of pairs', 'per process'],
        rows,
      );
    console.log(text);
    return text;
  },
};

export default scenario;
