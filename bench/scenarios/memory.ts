import { bundle, median, minMax, runChild, type Scenario, table } from '../lib';
import { barChart, saveChart } from '../svg';

const RUNS = 5;

interface Result {
  beforeMb: number;
  afterMb: number;
}

const contenders: Array<[string, string]> = [
  ['ours', 'keyedDispatch (LocalBus receiver)'],
  ['groupBy', 'groupBy(key) + concatMap, no duration selector'],
];

const mb = (v: number) => `${v.toFixed(1)} MB`;

const scenario: Scenario = {
  title: '1,000,000 distinct keys, one message each; heap after drain vs before',
  async run(args) {
    const runs = Number(args[0] ?? RUNS);
    const child = bundle('scenarios/memory-child.ts');
    const results = new Map<string, Result[]>(contenders.map(([id]) => [id, []]));
    for (let r = 0; r < runs; r++) {
      for (const [id] of contenders) results.get(id)?.push(runChild<Result>(child, [id]));
    }
    const values = (id: string, f: (x: Result) => number) => (results.get(id) ?? []).map(f);
    const ratio = (x: Result) => x.afterMb / x.beforeMb;
    const rows = contenders.map(([id, label]) => {
      const [lo, hi] = minMax(values(id, ratio));
      return [
        label,
        mb(median(values(id, (x) => x.beforeMb))),
        mb(median(values(id, (x) => x.afterMb))),
        `${median(values(id, ratio)).toFixed(2)}×`,
        `${lo.toFixed(2)}× – ${hi.toFixed(2)}×`,
      ];
    });
    const text =
      'The pipeline stays subscribed (its source never completes); the heap is measured after two forced ' +
      'collections, with the pipeline idle, before and after the keys passed through. Target for keyedDispatch: ' +
      `after ≤ 1.1× before. Medians over ${runs} runs, each a fresh process (min – max of the ratio):\n\n` +
      table(['pattern', 'heap before', 'heap after drain', 'after / before', 'range'], rows);
    console.log(`${text}\n`);
    const chart = barChart({
      title: 'Heap before and after 1,000,000 distinct keys (median)',
      categories: contenders.map(([id]) => id),
      series: [
        { name: 'heap before (MB)', values: contenders.map(([id]) => median(values(id, (x) => x.beforeMb))) },
        {
          name: 'heap after drain (MB)',
          values: contenders.map(([id]) => median(values(id, (x) => x.afterMb))),
        },
      ],
      yLabel: 'MB',
    });
    return `${saveChart('memory-heap', chart, 'heap before and after')}\n\n${text}`;
  },
};

export default scenario;
