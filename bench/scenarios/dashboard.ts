import { join } from 'node:path';
import { build } from 'esbuild';
import { clientBundlePlugin } from '../../src/dashboard/bundle-client';
import { median, minMax, rate, runChild, type Scenario, table } from '../lib';

/** Fresh processes, each alternating the three states for ROUNDS rounds. */
const PROCESSES = 3;
const ROUNDS = 10;

interface Round {
  plain: number;
  served: number;
  watched: number;
  frames: number;
  bytes: number;
}

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

/** `bundle` of bench/lib.ts, with the dashboard's page script put in as the package build does. */
async function bundleChild(entry: string): Promise<string> {
  const outfile = join(__dirname, '..', '..', '.bench-out', `${entry.replace(/[^\w]+/g, '_')}.js`);
  await build({
    entryPoints: [join(__dirname, '..', entry)],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile,
    logLevel: 'warning',
    external: ['esbuild', 'piscina'],
    plugins: [clientBundlePlugin()],
  });
  return outfile;
}

const scenario: Scenario = {
  title: 'the dashboard serving a running dispatcher: no page connected vs one page connected',
  async run(args) {
    const processes = Number(args[0] ?? PROCESSES);
    const rounds = Number(args[1] ?? ROUNDS);
    const child = await bundleChild('scenarios/dashboard-child.ts');
    const all: Round[] = [];
    const reads: number[] = [];
    const liveReads: number[] = [];
    for (let p = 0; p < processes; p++) {
      const result = runChild<{ rounds: Round[]; liveReadMs: number; readMs: number }>(child, [
        String(rounds),
      ]);
      all.push(...result.rounds);
      reads.push(result.readMs);
      liveReads.push(result.liveReadMs);
    }
    const column = (f: keyof Round) => all.map((r) => r[f]);
    const rangeOf = (values: number[], show: (v: number) => string) => {
      const [lo, hi] = minMax(values);
      return `${show(lo)} – ${show(hi)}`;
    };
    const rows = (
      [
        ['plain', 'DispatchMetrics, no dashboard'],
        ['served', 'dashboard serving, no page connected'],
        ['watched', 'dashboard serving, one page connected (1 frame/s)'],
      ] as Array<[keyof Round, string]>
    ).map(([f, label]) => [label, rate(median(column(f))), rangeOf(column(f), rate)]);
    const servedRatios = all.map((r) => r.served / r.plain);
    const watchedRatios = all.map((r) => r.watched / r.plain);
    const ratios = [
      ['no page connected / no dashboard', pct(median(servedRatios)), rangeOf(servedRatios, pct)],
      ['one page connected / no dashboard', pct(median(watchedRatios)), rangeOf(watchedRatios, pct)],
    ];
    const frames = median(column('frames'));
    const frameBytes = median(all.filter((r) => r.frames > 0).map((r) => r.bytes / r.frames));
    const text =
      `One dispatcher (DispatchMetrics, default sampling; trivial synchronous handler, 1,000 keys) fed by a ` +
      'LocalBus sender in batches of 1,000 per event-loop turn, so timers run while it works. In one process, ' +
      `each round measures its throughput for 2 s in each of three states, the order rotating from round to ` +
      `round; ${processes} fresh processes × ${rounds} rounds. Rates are medians of the ${all.length} rounds ` +
      '(min – max); ratios are medians of the per-round ratios to the round\'s "no dashboard" rate.\n\n' +
      `${table(['state', 'msgs/s', 'range'], rows)}\n\n` +
      `${table(['throughput', 'median of rounds', 'range'], ratios)}\n\n` +
      `With no page connected the dashboard reads nothing (the snapshot streams start with the first page and ` +
      `stop with the last), so the first ratio is noise around 100 %. With one page connected, each ` +
      `dispatcher is read once a period (${frames} frames in a 2 s segment, median) and a frame of ` +
      `${Math.round(frameBytes)} bytes (median) is written to each page: one read of this dispatcher while it ` +
      `runs takes ${median(liveReads).toFixed(3)} ms (median of ${processes} processes), ` +
      `${(median(liveReads) / 10).toFixed(3)} % of each second, below what these rounds can resolve. One \`read()\` ` +
      'with 10,000 keys holding unfinished messages (the hot-key ranking grows with the live keys) takes ' +
      `${median(reads).toFixed(2)} ms.`;
    console.log(text);
    return text;
  },
};

export default scenario;
