import { bundle, median, minMax, rate, runChild, type Scenario, table } from '../lib';
import { barChart, saveChart } from '../svg';

const RUNS = 5;
const KEYS = [1_000, 100_000];

/** Contenders: id passed to the child, and the label in the table. */
const contenders: Array<[string, string]> = [
  ['ours:array', 'keyedDispatch, handler returns [m]'],
  ['ours:of', 'keyedDispatch, handler returns of(m)'],
  ['groupBy:array', 'groupBy + mergeMap(concatMap), handler returns [m]'],
  ['groupBy:of', 'groupBy + mergeMap(concatMap), handler returns of(m)'],
  ['ours:array:metrics', 'keyedDispatch [m] with DispatchMetrics (default sampling)'],
  ['ours:array:longturns', 'keyedDispatch [m] with DispatchMetrics + longTurnMs (times every run)'],
  ['hand', 'hand-written Map-of-queues loop (overhead floor)'],
];

const scenario: Scenario = {
  title: '1,000,000 messages, synchronous trivial handler, one thread',
  async run(args) {
    const runs = Number(args[0] ?? RUNS);
    const child = bundle('scenarios/core-child.ts');
    const sections: string[] = [];
    /** Median msgs/s per contender, per key count: the chart's bars. */
    const medians: number[][] = [];
    for (const keys of KEYS) {
      const results = new Map<string, number[]>(contenders.map(([id]) => [id, []]));
      // Alternating runs, each a fresh process (warm-up inside), so drift and JIT state hit all alike.
      for (let r = 0; r < runs; r++) {
        for (const [id] of contenders) {
          results.get(id)?.push(runChild<{ msgsPerSecond: number }>(child, [id, String(keys)]).msgsPerSecond);
        }
      }
      const med = (id: string) => median(results.get(id) ?? []);
      const rows = contenders.map(([id, label]) => {
        const [lo, hi] = minMax(results.get(id) ?? []);
        return [label, rate(med(id)), `${rate(lo)} – ${rate(hi)}`];
      });
      const ratios = [
        [
          'keyedDispatch / groupBy+concatMap, handler [m]',
          `${(med('ours:array') / med('groupBy:array')).toFixed(1)}×`,
        ],
        [
          'keyedDispatch / groupBy+concatMap, handler of(m)',
          `${(med('ours:of') / med('groupBy:of')).toFixed(1)}×`,
        ],
        [
          'keyedDispatch [m] / hand-written loop',
          `${((med('ours:array') / med('hand')) * 100).toFixed(0)} %`,
        ],
        ['keyedDispatch of(m) / hand-written loop', `${((med('ours:of') / med('hand')) * 100).toFixed(0)} %`],
        [
          'slowdown with DispatchMetrics, [m] (target ≤ 5 %)',
          `${((1 - med('ours:array:metrics') / med('ours:array')) * 100).toFixed(1)} %`,
        ],
        [
          'slowdown with DispatchMetrics + longTurnMs, [m]',
          `${((1 - med('ours:array:longturns') / med('ours:array')) * 100).toFixed(1)} %`,
        ],
      ];
      const text =
        `### ${keys.toLocaleString('en-US')} keys\n\nMedian msgs/s over ${runs} alternating runs, each a fresh ` +
        `process after two full-size warm-up runs (min – max):\n\n${table(['pattern', 'msgs/s', 'range'], rows)}\n\n` +
        table(['ratio of medians', 'value'], ratios);
      console.log(`${text}\n`);
      sections.push(text);
      medians.push(contenders.map(([id]) => med(id)));
    }
    const chart = barChart({
      title: 'Throughput vs keys (1,000,000 messages, median)',
      categories: KEYS.map((k) => `${k.toLocaleString('en-US')} keys`),
      series: contenders.map(([id], i) => ({ name: id, values: medians.map((m) => m[i]) })),
      yLabel: 'messages / s',
    });
    return `${saveChart('core-throughput', chart, 'throughput vs keys')}\n\n${sections.join('\n\n')}`;
  },
};

export default scenario;
