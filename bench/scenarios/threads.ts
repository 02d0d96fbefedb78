import { join } from 'node:path';
import { Piscina } from 'piscina';
import { lastValueFrom } from 'rxjs';
import { fromIterable, KeyedExecutor, keyedDispatch, ThreadExecutor, threadHandler } from '../../src';
import {
  type Alternation,
  CELL_DIR,
  inFreshProcess,
  type Rounds,
  type Run,
  ratios,
  series,
} from '../harness';
import type { Report, Scenario } from '../report';
import { median, rate, ratioCell, table, times } from '../stats';

/**
 * Thread lanes against one event-loop lane and against piscina (a thread pool with no per-key order):
 * (a) a CPU-bound handler of ~50 µs, (b) a trivial handler, where only the thread boundary costs.
 */

interface Message {
  key: number;
  n: number;
  iterations: number;
}

interface Cell extends Alternation {
  kind: 'cpu' | 'trivial';
  /** The handlers' module (plain CommonJS: threads and piscina load it by path). */
  handlers: string;
}

const CELLS = {
  cpu: { messages: 20_000, keys: 100, contenders: ['threads2', 'loop1', 'piscina'] },
  trivial: {
    messages: 200_000,
    keys: 1_000,
    contenders: ['threads2', 'piscina', 'loop1', 'thread1', 'loop1-4096', 'thread1-4096'],
  },
};

const LABELS: Record<string, string> = {
  threads2: 'thread lanes, 2 threads',
  loop1: 'one event-loop lane',
  thread1: 'thread lanes, 1 thread',
  'loop1-4096': 'one event-loop lane, window 4,096',
  'thread1-4096': 'thread lanes, 1 thread, window 4,096',
  piscina: 'piscina, 2 threads, 256 tasks at once (no per-key order)',
};

/** Hash rounds that take about `targetUs` on this thread. */
function calibrate(price: (m: Message) => unknown, targetUs: number): number {
  for (let n = 0; n < 50_000; n++) price({ key: 0, n, iterations: 1000 });
  for (let iterations = 1000; ; iterations *= 4) {
    const started = performance.now();
    for (let n = 0; n < 2000; n++) price({ key: 0, n, iterations });
    const us = ((performance.now() - started) * 1000) / 2000;
    if (us > 5) return Math.round((iterations * targetUs) / us);
  }
}

export function cell({ kind, handlers }: Cell): Record<string, Run> {
  const local = require(handlers) as Record<string, (m: Message) => number[]>;
  const { messages, keys, contenders } = CELLS[kind];
  const name = kind === 'cpu' ? 'price' : 'trivial';
  const iterations = kind === 'cpu' ? calibrate(local.price, 50) : 0;
  const input = Array.from({ length: messages }, (_, n): Message => ({ key: n % keys, n, iterations }));
  const loop = new KeyedExecutor({ lanes: 1 });
  const one = new ThreadExecutor({ workers: 1 });
  const two = new ThreadExecutor({ workers: 2 });
  const pool = new Piscina({ filename: handlers, minThreads: 2, maxThreads: 2 });
  const onThreads = threadHandler<Message, number>(handlers, name);
  const dispatch = (executor: KeyedExecutor | ThreadExecutor, maxInFlight: number) => async () => {
    const handle = executor instanceof ThreadExecutor ? onThreads : local[name];
    await lastValueFrom(
      fromIterable(input).pipe(keyedDispatch({ executor, key: (m) => m.key, handle, maxInFlight })),
      {
        defaultValue: 0,
      },
    );
  };
  const piscina = async () => {
    let next = 0;
    const worker = async () => {
      while (next < input.length) await pool.run(input[next++], { name });
    };
    await Promise.all(Array.from({ length: 256 }, worker));
  };
  const all: Record<string, () => Promise<void>> = {
    threads2: dispatch(two, kind === 'cpu' ? 256 : 4096),
    loop1: dispatch(loop, 256),
    thread1: dispatch(one, 256),
    'loop1-4096': dispatch(loop, 4096),
    'thread1-4096': dispatch(one, 4096),
    piscina,
  };
  return Object.fromEntries(
    contenders.map((id) => [
      id,
      async () => {
        const started = performance.now();
        await all[id]();
        return { rate: (messages * 1000) / (performance.now() - started) };
      },
    ]),
  );
}

/** Per round: µs a message costs on a thread lane over an event-loop lane, main-thread wall time. */
function boundaryUs(rs: Rounds, thread: string, loop: string): number {
  const t = series(rs, thread);
  const l = series(rs, loop);
  return median(t.map((x, i) => 1e6 / x - 1e6 / l[i]));
}

async function run({ rounds = 5 }: { rounds?: number }): Promise<Report> {
  // The worker script next to the cell bundles, where the library looks for it, as next to dist/.
  require('../../scripts/build-thread-worker.js').buildThreadWorkerSync(join(CELL_DIR, 'thread-worker.js'));
  const handlers = join(__dirname, '..', 'handlers', 'threads.js');
  const cells = {
    cpu: inFreshProcess('scenarios/threads', { kind: 'cpu', handlers, warmups: 3, rounds } satisfies Cell),
    trivial: inFreshProcess('scenarios/threads', {
      kind: 'trivial',
      handlers,
      warmups: 3,
      rounds,
    } satisfies Cell),
  };
  const sections = (['cpu', 'trivial'] as const).map((kind) => {
    const rs = cells[kind];
    const { messages, keys, contenders } = CELLS[kind];
    const rows = contenders.map((id) => [
      LABELS[id],
      rate(median(series(rs, id))),
      id === 'threads2' ? '' : ratioCell(ratios(rs, 'threads2', id)),
    ]);
    const what = kind === 'cpu' ? 'CPU-bound handler of ~50 µs (a calibrated hash)' : 'trivial handler';
    return `## (${kind === 'cpu' ? 'a' : 'b'}) ${what}, ${messages.toLocaleString('en-US')} messages, ${keys.toLocaleString('en-US')} keys\n\n${table(['contender', 'msgs/s', 'thread lanes, 2 threads, ÷ it'], rows)}`;
  });
  const us = (x: number) => `${x.toFixed(1)} µs`;
  const boundary = `The thread boundary, per message (1 ÷ the rate of one thread lane − 1 ÷ the rate of one event-loop lane, per round, median): ${us(boundaryUs(cells.trivial, 'thread1', 'loop1'))} with window 256, ${us(boundaryUs(cells.trivial, 'thread1-4096', 'loop1-4096'))} with window 4,096.`;
  return {
    method: `Each part is one fresh process running the library bundled as the package ships it, with the thread worker beside it. Contenders alternate on the same messages: three unmeasured runs each (threads compile on their own), then one run per round, ${rounds} rounds, the order rotated; ratios are medians of per-round ratios (min–max). keyedDispatch's window is 256 unless a row says otherwise; with the trivial handler, 2 thread lanes run with window 4,096. piscina runs the same handler module with 256 tasks outstanding and keeps no order.`,
    tables: `${sections.join('\n\n')}\n\n${boundary}`,
    figures: {
      'cpu.loop': times(median(ratios(cells.cpu, 'threads2', 'loop1'))),
      'cpu.piscina': times(median(ratios(cells.cpu, 'threads2', 'piscina'))),
      'trivial.piscina': times(median(ratios(cells.trivial, 'threads2', 'piscina'))),
      'boundary-256': us(boundaryUs(cells.trivial, 'thread1', 'loop1')),
      'boundary-4096': us(boundaryUs(cells.trivial, 'thread1-4096', 'loop1-4096')),
    },
    chart: {
      title: 'Thread lanes, one event-loop lane and piscina (median msgs/s)',
      categories: ['~50 µs CPU-bound handler', 'trivial handler'],
      series: ['threads2', 'loop1', 'piscina'].map((id) => ({
        name: LABELS[id].split(',')[0].split(' (')[0],
        values: [median(series(cells.cpu, id)), median(series(cells.trivial, id))],
      })),
      yLabel: 'messages / s',
    },
    headline: [
      [
        '~50 µs CPU-bound handler on 2 thread lanes: throughput',
        '**{cpu.loop}** one event-loop lane',
        '**{cpu.piscina}** piscina (no per-key order)',
      ],
      [
        'trivial handler on 2 thread lanes: throughput',
        '—',
        '**{trivial.piscina}** piscina (no per-key order)',
      ],
    ],
  };
}

const scenario: Scenario = {
  title: 'thread lanes against one event-loop lane and piscina, CPU-bound and trivial handlers',
  run,
};

export default scenario;
