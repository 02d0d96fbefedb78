import { bundle, median, minMax, rate, runChild, type Scenario, table } from '../lib';
import { barChart, saveChart } from '../svg';

const RUNS = 5;

interface Result {
  coldP50Ms: number;
  coldP99Ms: number;
  msgsPerSecond: number;
}

const contenders: Array<[string, string]> = [
  ['ours', 'keyedDispatch (LocalBus receiver)'],
  ['groupBy', 'groupBy(key) + concatMap'],
  ['wow', 'Wow 9.2: groupBy(hash % 128) + concatMap'],
];
const modes: Array<[string, string]> = [
  ['uniform', 'no hot key'],
  ['hot', 'hot key (50 %)'],
];

const ms = (v: number) => `${v.toFixed(2)} ms`;

const scenario: Scenario = {
  title: '1,000,000 messages over 1,000 keys, one key carrying 50 %; cold-key latency',
  async run(args) {
    const runs = Number(args[0] ?? RUNS);
    const child = bundle('scenarios/hot-key-child.ts');
    const results = new Map<string, Result[]>();
    for (let r = 0; r < runs; r++) {
      for (const [id] of contenders) {
        for (const [mode] of modes) {
          const key = `${id}:${mode}`;
          results.set(key, [...(results.get(key) ?? []), runChild<Result>(child, [id, mode])]);
        }
      }
    }
    const med = (key: string, f: keyof Result) => median((results.get(key) ?? []).map((x) => x[f]));
    const range = (key: string, f: keyof Result, show: (v: number) => string) => {
      const [lo, hi] = minMax((results.get(key) ?? []).map((x) => x[f]));
      return `${show(lo)} – ${show(hi)}`;
    };
    const rows = contenders.flatMap(([id, label]) =>
      modes.map(([mode, modeLabel]) => {
        const key = `${id}:${mode}`;
        return [
          label,
          modeLabel,
          ms(med(key, 'coldP50Ms')),
          range(key, 'coldP50Ms', ms),
          ms(med(key, 'coldP99Ms')),
          range(key, 'coldP99Ms', ms),
          rate(med(key, 'msgsPerSecond')),
        ];
      }),
    );
    const ratio = (id: string) => med(`${id}:hot`, 'coldP99Ms') / med(`${id}:uniform`, 'coldP99Ms');
    const ratios = contenders.map(([id, label]) => [
      `${label}: cold p99 with hot key / without${id === 'ours' ? ' (target ≤ 2×)' : ''}`,
      `${ratio(id).toFixed(2)}×`,
    ]);
    ratios.push([
      'cold p99 with hot key: groupBy+concatMap / keyedDispatch',
      `${(med('groupBy:hot', 'coldP99Ms') / med('ours:hot', 'coldP99Ms')).toFixed(1)}×`,
    ]);
    ratios.push([
      'cold p99 with hot key: Wow 9.2 / keyedDispatch',
      `${(med('wow:hot', 'coldP99Ms') / med('ours:hot', 'coldP99Ms')).toFixed(1)}×`,
    ]);
    const text =
      'Messages arrive in batches of 1,000 per event-loop turn (a paced source); the handler is asynchronous ' +
      '(resolves on the microtask queue). Latency of a cold-key message = its handler completion − its batch ' +
      `arrival, so waiting outside the window counts. Medians over ${runs} alternating runs, each a fresh ` +
      'process after a warm-up (min – max):\n\n' +
      `${table(['pattern', 'workload', 'cold p50', 'p50 range', 'cold p99', 'p99 range', 'msgs/s'], rows)}\n\n` +
      table(['ratio of medians', 'value'], ratios);
    console.log(`${text}\n`);
    const chart = barChart({
      title: 'Cold-key latency, hot key vs none (median of runs)',
      categories: contenders.flatMap(([id]) => modes.map(([mode]) => `${id} ${mode}`)),
      series: [
        {
          name: 'cold p50 (ms)',
          values: contenders.flatMap(([id]) => modes.map(([m]) => med(`${id}:${m}`, 'coldP50Ms'))),
        },
        {
          name: 'cold p99 (ms)',
          values: contenders.flatMap(([id]) => modes.map(([m]) => med(`${id}:${m}`, 'coldP99Ms'))),
        },
      ],
      yLabel: 'milliseconds',
    });
    return `${saveChart('hot-key-latency', chart, 'cold-key latency percentiles')}\n\n${text}`;
  },
};

export default scenario;
