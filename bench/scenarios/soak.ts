import { bundle, median, minMax, rate, runChild, type Scenario, table } from '../lib';
import { lineChart, saveChart } from '../svg';

interface Result {
  heapMb: number[];
  settledPerSecond: number[];
  p99Ms: number[];
  handled: number;
  orderViolations: number;
}

/** One run's figures: heap medians over its first and last minute, and medians of its one-second samples. */
interface RunFigures {
  first: number;
  last: number;
  drift: number;
  settledPerSecond: number;
  p99Ms: number;
  handled: number;
  orderViolations: number;
}

function figures(r: Result): RunFigures {
  const minute = Math.min(60, Math.floor(r.heapMb.length / 3));
  const first = median(r.heapMb.slice(0, minute));
  const last = median(r.heapMb.slice(-minute));
  return {
    first,
    last,
    drift: (last - first) / first,
    settledPerSecond: median(r.settledPerSecond),
    p99Ms: median(r.p99Ms),
    handled: r.handled,
    orderViolations: r.orderViolations,
  };
}

const scenario: Scenario = {
  title: 'a bounded random workload for 3 minutes, 5 runs (arguments: seconds, runs); heap flat, order kept',
  async run(args) {
    const seconds = Number(args[0] ?? 180);
    const runs = Number(args[1] ?? 5);
    const child = bundle('scenarios/soak-child.ts');
    const results: Result[] = [];
    for (let i = 0; i < runs; i++) {
      results.push(runChild<Result>(child, [String(seconds)]));
      console.log(`soak run ${i + 1} of ${runs} done`);
    }
    const all = results.map(figures);
    const cell = (pick: (f: RunFigures) => number, show: (x: number) => string) => {
      const values = all.map(pick);
      const [lo, hi] = minMax(values);
      return [show(median(values)), `${show(lo)} – ${show(hi)}`];
    };
    const mb = (x: number) => `${x.toFixed(1)} MB`;
    const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
    const violations = all.reduce((n, f) => n + f.orderViolations, 0);
    const worstDrift = Math.max(...all.map((f) => Math.abs(f.drift)));
    const ok = worstDrift <= 0.1 && violations === 0;
    const rows = [
      [
        'messages handled per run',
        ...cell(
          (f) => f.handled,
          (x) => x.toLocaleString('en-US'),
        ),
      ],
      ['per-key order violations, all runs (target 0)', String(violations), ''],
      ['heap median, first minute', ...cell((f) => f.first, mb)],
      ['heap median, last minute', ...cell((f) => f.last, mb)],
      ['last / first (target within ±10 % in every run)', ...cell((f) => f.drift, pct)],
      ['settled/s (median of the seconds)', ...cell((f) => f.settledPerSecond, rate)],
      [
        'handler p99, sampled (median of the seconds)',
        ...cell(
          (f) => f.p99Ms,
          (x) => `${x.toFixed(2)} ms`,
        ),
      ],
      ['verdict', ok ? 'pass' : 'FAIL', ''],
    ];
    const text =
      'Keys drawn from 10,000 (skewed to a few warm keys), at most 20,000 unsettled messages (the producer waits), ' +
      'handlers 60 % synchronous, 30 % promise, 10 % a 1–4 ms timer on the lane; per-key order checked in every ' +
      'handler; the heap sampled once a second after a forced collection, throughput and latency from ' +
      `\`DispatchMetrics.snapshots(1000)\`. ${runs} runs of ${seconds} s, each a fresh process; median over the ` +
      `runs (min – max):\n\n${table(['measure', 'median', 'range'], rows)}`;
    console.log(`${text}\n`);
    const longest = Math.max(...results.map((r) => r.heapMb.length));
    const chart = lineChart({
      title: 'Soak: heap after GC, one sample per second, each run',
      categories: Array.from({ length: longest }, (_, i) => `${i + 1}s`),
      series: results.map((r, i) => ({ name: `run ${i + 1} (MB)`, values: r.heapMb })),
      yLabel: 'MB',
      xLabel: 'time',
    });
    if (!ok) process.exitCode = 1;
    return `${saveChart('soak-heap', chart, 'soak heap over time')}\n\n${text}`;
  },
};

export default scenario;
