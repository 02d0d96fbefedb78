import { bundle, median, minMax, rate, runChild, type Scenario, table } from '../lib';

const RUNS = 5;

/** Contenders: id passed to the child, and the label in the table. */
const contenders: Array<[string, string]> = [
  ['ours:array', 'keyedDispatch, handler returns [m]'],
  ['ours:of', 'keyedDispatch, handler returns of(m)'],
  ['groupBy:array', 'groupBy + mergeMap(concatMap), handler returns [m]'],
  ['groupBy:of', 'groupBy + mergeMap(concatMap), handler returns of(m)'],
  ['hand', 'hand-written Map-of-queues loop (overhead floor)'],
];

const scenario: Scenario = {
  title: '1,000,000 messages, synchronous trivial handler, one thread',
  async run(args) {
    const runs = Number(args[0] ?? RUNS);
    const child = bundle('scenarios/core-child.ts');
    const sections: string[] = [];
    for (const keys of [1_000, 100_000]) {
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
      ];
      const text =
        `### ${keys.toLocaleString('en-US')} keys\n\nMedian msgs/s over ${runs} alternating runs, each a fresh ` +
        `process after a warm-up (min – max):\n\n${table(['pattern', 'msgs/s', 'range'], rows)}\n\n` +
        table(['ratio of medians', 'value'], ratios);
      console.log(`${text}\n`);
      sections.push(text);
    }
    return sections.join('\n\n');
  },
};

export default scenario;
