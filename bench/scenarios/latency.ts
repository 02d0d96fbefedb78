import { bundle, median, minMax, rate, runChild, type Scenario, table } from '../lib';
import { barChart, saveChart } from '../svg';
import {
  ARRIVAL_MS,
  CONTENDERS,
  DRAIN_MS,
  FRACTIONS,
  KEYS,
  type LatencyResults,
  MAX_MESSAGES,
  type RunResult,
} from './latency-child';

const ROUNDS = 5;

function ms(v: number): string {
  if (!Number.isFinite(v)) return `> ${DRAIN_MS / 1000} s after arrivals`;
  return v < 10 ? `${v.toFixed(2)} ms` : `${v.toFixed(0)} ms`;
}

const times = (x: number) => `${x.toFixed(2)}×`;

const scenario: Scenario = {
  title: `open-loop source at 50 % and 90 % of keyedDispatch's maximum, Promise handler, ${KEYS.toLocaleString('en-US')} keys: completion − arrival`,
  async run(args) {
    const rounds = Number(args[0] ?? ROUNDS);
    const raw = runChild<LatencyResults>(bundle('scenarios/latency-child.ts'), [String(rounds)]);
    // JSON carries an unfinished percentile as null.
    const runs = (id: string, r: number): RunResult[] =>
      (raw.runs[`${id}:${r}`] ?? []).map((x) => ({
        ...x,
        p50: x.p50 ?? Number.POSITIVE_INFINITY,
        p99: x.p99 ?? Number.POSITIVE_INFINITY,
        p999: x.p999 ?? Number.POSITIVE_INFINITY,
      }));
    const med = (id: string, r: number, f: 'p50' | 'p99' | 'p999') => median(runs(id, r).map((x) => x[f]));
    const top = median(raw.max);
    const [maxLo, maxHi] = minMax(raw.max);
    const rows: string[][] = [];
    const verdicts: string[] = [];
    raw.rates.forEach((r, i) => {
      for (const [id, label] of CONTENDERS) {
        rows.push([
          `${(FRACTIONS[i] * 100).toFixed(0)} % (${rate(r)} msgs/s)`,
          label,
          ms(med(id, r, 'p50')),
          ms(med(id, r, 'p99')),
          ms(med(id, r, 'p999')),
        ]);
      }
      const ours = runs('ours', r);
      const chain = runs('chain', r);
      const ratios = ours.map((o, j) => o.p99 / chain[j].p99);
      const [lo, hi] = minMax(ratios);
      const m = median(ratios);
      verdicts.push(
        `- at ${(FRACTIONS[i] * 100).toFixed(0)} %: keyedDispatch's p99 is ${times(m)} the chain's (median of ` +
          `per-round ratios, ${times(lo)}–${times(hi)}): ${m > 1 ? '**worse** than' : 'not worse than'} the chain's.`,
      );
    });
    const chart = barChart({
      title: 'p99 completion − arrival (median of rounds)',
      categories: raw.rates.map((r, i) => `${(FRACTIONS[i] * 100).toFixed(0)} % (${rate(r)}/s)`),
      series: CONTENDERS.filter(([id]) => id !== 'groupBy').map(([id]) => ({
        name: id === 'ours' ? 'keyedDispatch' : 'promise chain',
        values: raw.rates.map((r) => med(id, r, 'p99')),
      })),
      yLabel: 'ms',
    });
    const text =
      `${saveChart('latency-p99', chart, 'p99 latency, keyedDispatch and the promise chain')}\n\n` +
      `Maximum: keyedDispatch's closed-loop rate with \`async (m) => m\` at ${KEYS.toLocaleString('en-US')} keys ` +
      `(${MAX_MESSAGES.toLocaleString('en-US')} messages available at once), **${rate(top)} msgs/s** ` +
      `(median of ${rounds} runs, ${rate(maxLo)} – ${rate(maxHi)}). Then each rate's arrivals last ${ARRIVAL_MS} ms ` +
      '(uniform random keys, the same schedule for every contender), offered on every event-loop turn as they ' +
      "fall due whether or not the pattern keeps up; a message's latency runs from its scheduled arrival to " +
      'its completion, so a late intake counts. keyedDispatch pulls arrived messages from a receiver ' +
      "(a broker's log), the chain's producer offers them while it accepts, `groupBy` gets them pushed. " +
      `Contenders alternate in one process, the order rotated every round; medians of ${rounds} rounds:\n\n` +
      `${table(['offered rate', 'pattern', 'p50', 'p99', 'p999'], rows)}\n\n${verdicts.join('\n')}`;
    console.log(text);
    return text;
  },
};

export default scenario;
