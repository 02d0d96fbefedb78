import { bundle, median, minMax, rate, runChild, table } from '../lib';
import { barChart, saveChart } from '../svg';
import { type Group, SHAPES, type Shape } from './core-matrix-child';

/**
 * The core matrix: handler shapes × keys at window 256 with the pulled source, and the source and window
 * axes for the Promise and `of(m)` shapes. Each cell is one group of contenders measured side by side in
 * one fresh process, alternating; figures are medians of per-round ratios.
 */

export const MESSAGES = 300_000;
/** 1,000,000 keys take 1,000,000 messages (one per key), so fewer rounds there. */
const MILLION = 1_000_000;
const ROUNDS = 5;
const MILLION_ROUNDS = 3;
export const KEYS = [1, 1_000, 100_000, MILLION];
const PROMISE_SHAPES: Shape[] = ['async', 'defer'];
/** Shapes that get the source and window axes, and the key counts where they do. */
const AXIS_SHAPES: Shape[] = ['async', 'of'];
const AXIS_KEYS = [1_000, 100_000];
/** Shapes the hand-written loop runs: the floor of what a dispatcher costs for them. */
const HAND_SHAPES: Shape[] = ['array', 'of', 'async'];

export const OURS = 'ours:pulled:256';
export const CHAIN = 'chain:256';
export const PQUEUE = 'pqueue:256';
export const GROUP_BY = 'groupBy:plain';
export const HAND = 'hand:256';

export const LABELS: Record<string, string> = {
  [OURS]: 'keyedDispatch, pulled `fromIterable`, window 256',
  'ours:plain:256': 'keyedDispatch, plain `from(array)`',
  'ours:subject:256': 'keyedDispatch, plain `Subject` (10,000 a turn)',
  'ours:pulled:4096': 'keyedDispatch, window 4,096',
  'ours:pulled:65536': 'keyedDispatch, window 65,536',
  'ours:pulled:256:metrics': 'keyedDispatch with `DispatchMetrics`',
  'ours:pulled:256:longturns': 'keyedDispatch with `DispatchMetrics` + `longTurnMs`',
  [GROUP_BY]: '`groupBy` + `mergeMap(concatMap)`, `from(array)`',
  'groupBy:subject': '`groupBy` + `mergeMap(concatMap)`, `Subject`',
  [CHAIN]: 'hand-written per-key promise chain, 256 unfinished',
  [PQUEUE]: 'p-queue per key, 256 unfinished',
  [HAND]: 'hand-written Map-of-queues loop (overhead floor)',
};

/** The group of one shape and key count. */
export function groupOf(shape: Shape, keys: number): Group {
  const contenders = [OURS];
  const limited: Record<string, number> = {};
  if (AXIS_SHAPES.includes(shape) && AXIS_KEYS.includes(keys)) {
    contenders.push('ours:plain:256', 'ours:subject:256', 'ours:pulled:4096', 'ours:pulled:65536');
  }
  if (shape === 'array' && AXIS_KEYS.includes(keys)) {
    contenders.push('ours:pulled:256:metrics', 'ours:pulled:256:longturns');
  }
  if (HAND_SHAPES.includes(shape)) contenders.push(HAND);
  if (PROMISE_SHAPES.includes(shape)) contenders.push(CHAIN, PQUEUE);
  // p-queue takes over ten seconds a run at 1,000,000 keys: one run there.
  if (PROMISE_SHAPES.includes(shape) && keys >= MILLION) limited[PQUEUE] = 1;
  // groupBy keeps every group until its source completes: at 1,000,000 keys that is gigabytes (the
  // memory scenario measures it), and at 100,000 keys a run takes tens of seconds, so one run there, for
  // the shapes whose ratios are quoted. With one key and a Promise handler, concatMap buffers the whole
  // backlog in an array it shifts from the front: quadratic (9 k msgs/s at 80,000 messages, falling).
  const quotedShape = shape === 'array' || shape === 'of';
  const quadratic = keys === 1 && PROMISE_SHAPES.includes(shape);
  if (!quadratic && (keys < 100_000 || (keys < MILLION && quotedShape))) {
    contenders.push(GROUP_BY);
    if (keys >= 100_000) limited[GROUP_BY] = 1;
    if (AXIS_SHAPES.includes(shape) && keys === 1_000) contenders.push('groupBy:subject');
  }
  const million = keys >= MILLION;
  return {
    shape,
    keys,
    messages: million ? MILLION : MESSAGES,
    warmups: million ? 1 : 2,
    rounds: million ? MILLION_ROUNDS : ROUNDS,
    contenders,
    limited,
  };
}

/** Per-round msgs/s of every contender of a group. */
export interface Measured {
  group: Group;
  rates: Record<string, number[]>;
}

export function measureMatrix(): Map<string, Measured> {
  const child = bundle('scenarios/core-matrix-child.ts');
  const results = new Map<string, Measured>();
  for (const shape of Object.keys(SHAPES) as Shape[]) {
    for (const keys of KEYS) {
      const group = groupOf(shape, keys);
      const started = performance.now();
      const { rates } = runChild<{ rates: Record<string, number[]> }>(child, [JSON.stringify(group)]);
      console.error(`core ${shape} × ${keys} keys: ${((performance.now() - started) / 1000).toFixed(0)} s`);
      results.set(`${shape}:${keys}`, { group, rates });
    }
  }
  return results;
}

/** Per-round ratios of `a` to `b` (rounds where both ran). */
export function ratios(m: Measured | undefined, a: string, b: string): number[] {
  const xs = m?.rates[a] ?? [];
  const ys = m?.rates[b] ?? [];
  const out: number[] = [];
  for (let i = 0; i < Math.min(xs.length, ys.length); i++) out.push(xs[i] / ys[i]);
  return out;
}

const times = (x: number) => `${x >= 10 ? x.toFixed(0) : x.toFixed(2)}×`;

/** `1.23× (1.05–1.40)`: the median of per-round ratios and their range. */
export function ratioCell(xs: number[]): string {
  if (xs.length === 0) return '—';
  if (xs.length === 1) return `${times(xs[0])} (1 round)`;
  const [lo, hi] = minMax(xs);
  return `${times(median(xs))} (${times(lo)}–${times(hi)})`;
}

/** One Markdown table and chart per shape: msgs/s and ratios against the baselines that apply. */
export function shapeSection(shape: Shape, results: Map<string, Measured>): string {
  const baselines: Array<[string, string]> = [
    ...(PROMISE_SHAPES.includes(shape)
      ? ([
          [CHAIN, '÷ promise chain'],
          [PQUEUE, '÷ p-queue'],
        ] as Array<[string, string]>)
      : []),
    [GROUP_BY, '÷ groupBy'],
    ...(HAND_SHAPES.includes(shape) ? ([[HAND, '÷ hand loop']] as Array<[string, string]>) : []),
  ];
  const header = ['keys', 'contender', 'msgs/s', ...baselines.map(([, h]) => h), '÷ pulled, 256'];
  const rows: string[][] = [];
  for (const keys of KEYS) {
    const m = results.get(`${shape}:${keys}`);
    if (!m) continue;
    for (const id of m.group.contenders) {
      const ours = id.startsWith('ours');
      rows.push([
        keys.toLocaleString('en-US'),
        LABELS[id] ?? id,
        rate(median(m.rates[id])),
        // The hand loop's own ratios to groupBy and the chain: the most any dispatcher could reach.
        ...baselines.map(([b]) =>
          (ours || (id === HAND && b !== HAND)) && m.rates[b] ? ratioCell(ratios(m, id, b)) : '',
        ),
        ours && id !== OURS ? ratioCell(ratios(m, id, OURS)) : '',
      ]);
    }
  }
  const series = [OURS, ...baselines.map(([b]) => b)];
  const chart = barChart({
    title: `${SHAPES[shape]}: throughput vs keys (median msgs/s)`,
    categories: KEYS.map((k) => `${k.toLocaleString('en-US')} keys`),
    series: series.map((id) => ({
      name: id.split(':')[0],
      values: KEYS.map((k) => {
        const xs = results.get(`${shape}:${k}`)?.rates[id];
        return xs?.length ? median(xs) : 0;
      }),
    })),
    yLabel: 'messages / s',
  });
  return (
    `### \`${SHAPES[shape]}\`\n\n${saveChart(`core-${shape}`, chart, `${SHAPES[shape]} throughput vs keys`)}\n\n` +
    table(header, rows)
  );
}
