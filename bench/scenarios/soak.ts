import { bundle, median, rate, runChild, type Scenario, table } from '../lib';
import { lineChart, saveChart } from '../svg';

interface Result {
  heapMb: number[];
  settledPerSecond: number[];
  p99Ms: number[];
  handled: number;
  orderViolations: number;
}

const scenario: Scenario = {
  title: 'a bounded random workload for 3 minutes (argument: seconds); heap flat, order kept',
  async run(args) {
    const seconds = Number(args[0] ?? 180);
    const child = bundle('scenarios/soak-child.ts');
    const r = runChild<Result>(child, [String(seconds)]);
    const minute = Math.min(60, Math.floor(r.heapMb.length / 3));
    const first = median(r.heapMb.slice(0, minute));
    const last = median(r.heapMb.slice(-minute));
    const drift = (last - first) / first;
    const ok = Math.abs(drift) <= 0.1 && r.orderViolations === 0;
    const rows = [
      ['duration', `${seconds} s (${r.heapMb.length} one-second samples)`],
      ['messages handled', r.handled.toLocaleString('en-US')],
      ['per-key order violations (target 0)', String(r.orderViolations)],
      [`heap median, first ${minute} s`, `${first.toFixed(1)} MB`],
      [`heap median, last ${minute} s`, `${last.toFixed(1)} MB`],
      ['last / first (target within ±10 %)', `${(drift * 100).toFixed(1)} %`],
      ['settled/s, median of the seconds', rate(median(r.settledPerSecond))],
      ['handler p99 (sampled), median of the seconds', `${median(r.p99Ms).toFixed(2)} ms`],
      ['verdict', ok ? 'pass' : 'FAIL'],
    ];
    const text =
      'Keys drawn from 10,000 (skewed to a few warm keys), at most 20,000 unsettled messages (the producer waits), ' +
      'handlers 60 % synchronous, 30 % promise, 10 % a 1–4 ms timer on the lane; per-key order checked in every ' +
      'handler; the heap sampled once a second after a forced collection, throughput and latency from ' +
      '`DispatchMetrics.snapshots(1000)`. One run (medians are over its one-second samples):\n\n' +
      table(['measure', 'value'], rows);
    console.log(`${text}\n`);
    const chart = lineChart({
      title: 'Soak: heap after GC, one sample per second',
      categories: r.heapMb.map((_, i) => `${i + 1}s`),
      series: [{ name: 'heap used (MB)', values: r.heapMb }],
      yLabel: 'MB',
      xLabel: 'time',
    });
    if (!ok) process.exitCode = 1;
    return `${saveChart('soak-heap', chart, 'soak heap over time')}\n\n${text}`;
  },
};

export default scenario;
