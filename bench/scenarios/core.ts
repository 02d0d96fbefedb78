import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { concatMap, from, groupBy, mergeMap, type ObservableInput, of, Subscriber } from 'rxjs';
import { DispatchMetrics, fromIterable, KeyedExecutor, keyedDispatch } from '../../src';
import { handMailboxLoop, handPromiseLoop } from '../baselines/hand-mailbox';
import { pQueuePerKey } from '../baselines/p-queue-per-key';
import { type Offered, produce, promiseChain } from '../baselines/promise-chain';
import { type Alternation, inFreshProcess, type Rounds, type Run, ratios, series } from '../harness';
import type { Report, Scenario } from '../report';
import { median, rate, ratioCell, table, times } from '../stats';

/**
 * Throughput of one dispatcher on one thread: keyedDispatch against what users write instead (a per-key
 * promise chain; RxJS groupBy + concatMap), the strongest peer (p-queue per key) and a hand-written loop
 * with no features (the floor), for three handler shapes at 1,000 and 100,000 keys.
 */

interface Message {
  key: number;
  seq: number;
}

const SHAPES = { async: 'async (m) => m', of: '(m) => of(m)', array: '(m) => [m]' } as const;
type Shape = keyof typeof SHAPES;

const LABELS: Record<string, string> = {
  ours: 'keyedDispatch, window 256',
  metrics: 'keyedDispatch with `DispatchMetrics` (default sampling)',
  longTurns: 'keyedDispatch with `DispatchMetrics` and `longTurnMs`',
  chain: 'per-key promise chain, 256 unfinished',
  pQueue: 'p-queue per key, 256 unfinished',
  groupBy: '`groupBy` + `mergeMap(concatMap)`',
  hand: 'hand-written loop (the floor)',
  plain: 'keyedDispatch from a plain `from(array)` (each message runs as it arrives)',
  wide: 'keyedDispatch, window 65,536',
  cjs: 'keyedDispatch, the shipped CommonJS build',
  esm: 'keyedDispatch, the shipped ESM build',
};

interface Cell extends Alternation {
  shape: Shape;
  keys: number;
  messages: number;
  contenders: string[];
}

const MESSAGES = 300_000;
const KEYS = [1_000, 100_000];

/** The contenders of a cell. groupBy takes tens of seconds a run at 100,000 keys: only at 1,000. */
function contendersOf(shape: Shape, keys: number): string[] {
  const few = keys === 1_000;
  return [
    'ours',
    ...(shape === 'async' ? ['chain', 'pQueue'] : []),
    ...(few ? ['groupBy'] : []),
    ...(shape === 'array' && few ? ['metrics', 'longTurns'] : []),
    ...(shape === 'async' && few ? ['plain', 'cjs', 'esm'] : []),
    ...(shape === 'async' && !few ? ['wide'] : []),
    'hand',
  ];
}

const handlers: Record<Shape, (m: Message) => ObservableInput<Message>> = {
  async: async (m) => m,
  of: (m) => of(m),
  array: (m) => [m],
};
const keyOf = (m: Message) => m.key;

function counted(source: { subscribe: (o: object) => unknown }): Promise<number> {
  return new Promise((resolve, reject) => {
    let n = 0;
    source.subscribe({ next: () => n++, error: reject, complete: () => resolve(n) });
  });
}

/** Counts a handler Observable's values with a bare Subscriber: what running `of(m)` costs at least. */
class Counted extends Subscriber<Message> {
  values = 0;
  protected override _next(): void {
    this.values++;
  }
}

/** dist/, as `npm run build` writes it: the package's two formats (`npm run` starts in the package root). */
const DIST = join(process.cwd(), 'dist');

/** The library as the package ships it, in either format (Node loads the ESM build through require). */
function shipped(format: 'cjs' | 'esm'): typeof import('../../src') {
  return require(join(DIST, format === 'cjs' ? 'index.js' : 'index.mjs'));
}

/** A bounded per-key baseline fed by its producer; resolves to the messages finished. */
function offered(make: (done: () => void) => Offered<Message>, input: readonly Message[]): Promise<number> {
  return new Promise((resolve) => {
    let n = 0;
    void produce(
      input,
      make(() => {
        if (++n === input.length) resolve(n);
      }),
    );
  });
}

/** The runs of one cell, set up in its own process: each runs the whole input and reports msgs/s. */
export function cell({ shape, keys, messages, contenders }: Cell): Record<string, Run> {
  const input = Array.from({ length: messages }, (_, seq): Message => ({ key: seq % keys, seq }));
  const handle = handlers[shape];
  const promise = handle as (m: Message) => Promise<Message>;
  const executor = new KeyedExecutor();
  const dispatch = (stats?: DispatchMetrics, maxInFlight?: number) => {
    const options = { key: keyOf, handle, executor, stats, maxInFlight };
    return async () => {
      const watching = stats?.snapshots(100).subscribe();
      const n = await counted(fromIterable(input).pipe(keyedDispatch(options)));
      watching?.unsubscribe();
      return n;
    };
  };
  const hand = (): number => {
    let n = 0;
    const each =
      shape === 'array'
        ? () => n++
        : (m: Message) => {
            const subscriber = new Counted();
            of(m).subscribe(subscriber);
            n += subscriber.values;
          };
    handMailboxLoop(input[Symbol.iterator](), keyOf, each);
    return n;
  };
  const build = (format: 'cjs' | 'esm') => {
    const lib = shipped(format);
    const options = { key: keyOf, handle, executor: new lib.KeyedExecutor() };
    return () => counted(lib.fromIterable(input).pipe(lib.keyedDispatch(options)));
  };
  const all: Record<string, () => Promise<number> | number> = {
    ours: dispatch(),
    metrics: dispatch(new DispatchMetrics()),
    longTurns: dispatch(new DispatchMetrics({ longTurnMs: 50 })),
    plain: () => counted(from(input).pipe(keyedDispatch({ key: keyOf, handle, executor }))),
    wide: dispatch(undefined, 65_536),
    chain: () => offered((done) => promiseChain(keyOf, promise, done), input),
    pQueue: () => offered((done) => pQueuePerKey(keyOf, promise, done), input),
    groupBy: () =>
      counted(
        from(input).pipe(
          groupBy(keyOf),
          mergeMap((g) => g.pipe(concatMap(handle))),
        ),
      ),
    hand: shape === 'async' ? () => handPromiseLoop(input, keyOf, promise) : hand,
  };
  // Loaded only where a cell runs them: the other cells need no build.
  if (contenders.includes('cjs')) all.cjs = build('cjs');
  if (contenders.includes('esm')) all.esm = build('esm');
  return Object.fromEntries(
    contenders.map((id) => [
      id,
      async () => {
        const started = performance.now();
        const n = await all[id]();
        const seconds = (performance.now() - started) / 1000;
        if (n !== messages) throw new Error(`${id} handled ${n} of ${messages}`);
        return { rate: messages / seconds };
      },
    ]),
  );
}

const METHOD = `Each cell (a handler shape and a key count) is one fresh process; its contenders run the same ${MESSAGES.toLocaleString('en-US')} messages (message *i* has key *i* mod keys) from an array, alternating: two unmeasured runs each, then one run per round, the order rotated every round, no forced collection between runs. Ratios are medians of per-round ratios (min–max); msgs/s are medians of the rounds.

- **keyedDispatch**: \`fromIterable(array).pipe(keyedDispatch({ key, handle }))\` on a \`KeyedExecutor\` with the default lanes, window 256.
- **Per-key promise chain** (what users write instead, for Promise handlers): a Map of each key's last promise; a message with no tail starts at once, else in \`tail.then(() => handle(m))\`; the tail is deleted when its key's last message ends; the producer awaits a free slot when 256 are unfinished. No wrapper per message.
- **p-queue per key** (the strongest peer): a Map of \`PQueue({ concurrency: 1 })\` per key, forgotten when the key's last message ends, with the same bound and producer.
- **\`groupBy\` + \`mergeMap(concatMap)\`** (what RxJS users write instead): from \`from(array)\`; at 1,000 keys only (at 100,000 a run takes tens of seconds).
- **Hand-written loop** (the floor, no lanes, no fairness, no errors): a Map of queues counting \`[m]\`, subscribing a bare \`Subscriber\` to each \`of(m)\`, or, for Promise handlers, starting a key's next message in its predecessor's \`then\`.
- **A plain source**: the same keyedDispatch subscribed to \`from(array)\` instead of a receiver: each message runs as it arrives, with no admission batches; its figure is the median of per-round ratios of its rate to the pulled one's.
- **A wide window**: the same keyedDispatch with \`maxInFlight: 65,536\` (at 100,000 keys); its figure is the median of per-round ratios of its rate to window 256's.
- **The shipped builds**: the same keyedDispatch from \`dist/index.js\` (CommonJS) and \`dist/index.mjs\` (ESM), as \`npm run build\` writes them, for a Promise handler at 1,000 keys; their ratio is the median of per-round ratios of the CommonJS build's rate to the ESM build's.
- **Metrics**: keyedDispatch with a \`DispatchMetrics\` whose snapshots are watched, as a dashboard does; its figure is the median of per-round ratios of its rate to keyedDispatch's without metrics.`;

async function run({ rounds = 5 }: { rounds?: number }): Promise<Report> {
  // Built every time: the shipped builds must be those of the sources measured beside them.
  execFileSync('npm', ['run', 'build'], { stdio: 'inherit' });
  const cells = new Map<string, Rounds>();
  for (const shape of Object.keys(SHAPES) as Shape[]) {
    for (const keys of KEYS) {
      const contenders = contendersOf(shape, keys);
      const cell: Cell = { shape, keys, messages: MESSAGES, contenders, warmups: 2, rounds };
      console.error(`core: ${shape}, ${keys} keys`);
      cells.set(`${shape}-${keys}`, inFreshProcess('scenarios/core', cell));
    }
  }
  const figures: Record<string, string> = {};
  const sections: string[] = [];
  for (const shape of Object.keys(SHAPES) as Shape[]) {
    const rows: string[][] = [];
    for (const keys of KEYS) {
      const rs = cells.get(`${shape}-${keys}`) as Rounds;
      for (const id of contendersOf(shape, keys)) {
        const vs = id === 'ours' ? [] : ratios(rs, 'ours', id);
        if (id !== 'ours' && !id.startsWith('metrics') && id !== 'longTurns')
          figures[`${shape}-${keys}.${id}`] = times(median(vs));
        rows.push([keys.toLocaleString('en-US'), LABELS[id], rate(median(series(rs, id))), ratioCell(vs)]);
      }
    }
    sections.push(
      `## \`${SHAPES[shape]}\`\n\n${table(['keys', 'contender', 'msgs/s', 'keyedDispatch ÷ it'], rows)}`,
    );
  }
  const builds = ratios(cells.get('async-1000') as Rounds, 'cjs', 'esm');
  figures['cjs-esm'] = times(median(builds));
  const plain = ratios(cells.get('async-1000') as Rounds, 'plain', 'ours');
  figures['plain-pulled'] = times(median(plain));
  const wide = ratios(cells.get('async-100000') as Rounds, 'wide', 'ours');
  figures['wide-window'] = times(median(wide));
  sections.push(
    [
      `The shipped CommonJS build ÷ the shipped ESM build, \`async\` handler, 1,000 keys: ${ratioCell(builds)}.`,
      `A plain \`from(array)\` ÷ the same array pulled through \`fromIterable\`, \`async\` handler, 1,000 keys: ${ratioCell(plain)}.`,
      `Window 65,536 ÷ window 256, \`async\` handler, 100,000 keys: ${ratioCell(wide)}.`,
    ].join('\n\n'),
  );
  const array = cells.get('array-1000') as Rounds;
  figures.metrics = times(median(ratios(array, 'metrics', 'ours')));
  figures['long-turns'] = times(median(ratios(array, 'longTurns', 'ours')));
  const chartIds = ['ours', 'chain', 'pQueue', 'groupBy', 'hand'];
  return {
    method: METHOD,
    tables: sections.join('\n\n'),
    figures,
    chart: {
      title: 'Throughput, one thread (median msgs/s)',
      categories: [...cells.keys()].map((c) =>
        c.replace('-', ', ').replace(/(\d+)$/, (k) => `${Number(k) / 1000}k keys`),
      ),
      series: chartIds.map((id) => ({
        name: LABELS[id].split(',')[0].replace(/`/g, ''),
        values: [...cells.values()].map((rs) => (rs[id] ? median(series(rs, id)) : 0)),
      })),
      yLabel: 'messages / s',
    },
    headline: [
      [
        'Promise handler, 1,000 keys: throughput',
        '**{async-1000.chain}** a per-key promise chain',
        '**{async-1000.pQueue}** p-queue per key',
      ],
      [
        'Promise handler, 100,000 keys: throughput',
        '**{async-100000.chain}** a per-key promise chain',
        '**{async-100000.pQueue}** p-queue per key',
      ],
      [
        '`of(m)` handler, 1,000 keys: throughput',
        '**{of-1000.groupBy}** RxJS `groupBy` + `mergeMap(concatMap)`',
        'no RxJS peer dispatches by key',
      ],
    ],
  };
}

const scenario: Scenario = {
  title: 'throughput of one dispatcher on one thread, three handler shapes, 1,000 and 100,000 keys',
  run,
};

export default scenario;
