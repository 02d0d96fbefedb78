// The cost of the dashboard to a running dispatcher, in one process: `dashboard-child <rounds>`.
// One long-lived dispatcher (DispatchMetrics, default sampling) handles a paced stream; each round
// measures its throughput for SEGMENT_MS in each state, in a rotating order: metrics only, dashboard
// serving with no page connected, and dashboard with one page (an event-stream client) connected.
// Prints `{ "rounds": [{ "plain": n, "served": n, "watched": n, "frames": n, "bytes": n }], "liveReadMs": n,
// "readMs": n }` on its last line (rates in msgs/s; frames and bytes the page received in the measured
// segment; the time of one read() of the running dispatcher, and of one with 10,000 live keys).
import { get, type IncomingMessage } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { firstValueFrom, Subject } from 'rxjs';
import { DispatchMetrics, fromIterable, KeyedExecutor, keyedDispatch, LocalBus } from '../../src';
import { type Dashboard, serveDashboard } from '../../src/dashboard';
import { median } from '../lib';

interface Message {
  key: number;
  seq: number;
}

const KEYS = 1_000;
/** Messages sent per event-loop turn: a paced source, so timers (the dashboard's) run during a segment. */
const BATCH = 1_000;
const SEGMENT_MS = 2_000;
const SETTLE_MS = 300;
type State = 'plain' | 'served' | 'watched';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Sends batches until `stop` is set, each after the previous one was queued (LocalBus paces the sender). */
async function produce(bus: LocalBus<Message>, stop: { done: boolean }): Promise<void> {
  let seq = 0;
  while (!stop.done) {
    let last: Promise<void> = Promise.resolve();
    for (let i = 0; i < BATCH; i++, seq++) last = bus.send({ key: seq % KEYS, seq });
    await last;
    await nextTurn();
  }
}

/** An event-stream client that takes what it is sent (a page's parsing happens in the browser, not here). */
function connect(url: string): Promise<{ frames: () => number; bytes: () => number; close: () => void }> {
  return new Promise((resolve, reject) => {
    get(new URL('/events', url), (response: IncomingMessage) => {
      let frames = 0;
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        const found = chunk.toString('latin1').split('event: frame').length - 1;
        frames += found;
        if (found > 0) bytes += chunk.length;
      });
      resolve({ frames: () => frames, bytes: () => bytes, close: () => response.destroy() });
    }).on('error', reject);
  });
}

/** What one `read()` costs with 10,000 keys holding unfinished messages (the hot-key ranking is the part that grows). */
async function readCost(): Promise<number> {
  const metrics = new DispatchMetrics();
  const gate = new Subject<void>();
  const keys = Array.from({ length: 10_000 }, (_, seq) => ({ key: seq, seq }));
  const subscription = fromIterable(keys)
    .pipe(
      keyedDispatch({
        stats: metrics,
        maxInFlight: 10_000,
        key: (m: Message) => m.key,
        handle: () => firstValueFrom(gate, { defaultValue: undefined }),
      }),
    )
    .subscribe();
  if (metrics.read().liveMailboxes !== 10_000) throw new Error('expected 10,000 live keys');
  const times: number[] = [];
  for (let i = 0; i < 50; i++) {
    const started = performance.now();
    metrics.read();
    times.push(performance.now() - started);
  }
  subscription.unsubscribe();
  return median(times);
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 10);
  const metrics = new DispatchMetrics();
  const bus = new LocalBus<Message>();
  bus
    .receive()
    .pipe(
      keyedDispatch({ executor: new KeyedExecutor(), stats: metrics, key: (m) => m.key, handle: (m) => [m] }),
    )
    .subscribe();
  const stop = { done: false };
  const producing = produce(bus, stop);

  let dashboard: Dashboard | null = null;
  let client: Awaited<ReturnType<typeof connect>> | null = null;
  async function enter(state: State): Promise<void> {
    if (state !== 'watched' && client !== null) {
      client.close();
      client = null;
    }
    if (state === 'plain' && dashboard !== null) {
      await dashboard.close();
      dashboard = null;
    }
    if (state !== 'plain' && dashboard === null)
      dashboard = await serveDashboard({ sources: { bench: metrics } });
    if (state === 'watched' && client === null) client = await connect((dashboard as Dashboard).url);
  }
  async function measure(state: State): Promise<{ rate: number; frames: number; bytes: number }> {
    await enter(state);
    await sleep(SETTLE_MS);
    const framesBefore = client?.frames() ?? 0;
    const bytesBefore = client?.bytes() ?? 0;
    const before = metrics.snapshot().settled;
    const started = performance.now();
    await sleep(SEGMENT_MS);
    const settled = metrics.snapshot().settled - before;
    const seconds = (performance.now() - started) / 1000;
    return {
      rate: settled / seconds,
      frames: (client?.frames() ?? 0) - framesBefore,
      bytes: (client?.bytes() ?? 0) - bytesBefore,
    };
  }

  const orders: State[][] = [
    ['plain', 'served', 'watched'],
    ['served', 'watched', 'plain'],
    ['watched', 'plain', 'served'],
  ];
  await measure('plain'); // warm-up of every path
  await measure('watched');
  const results: Array<Record<State, number> & { frames: number; bytes: number }> = [];
  for (let r = 0; r < rounds; r++) {
    const round = { plain: 0, served: 0, watched: 0, frames: 0, bytes: 0 };
    for (const state of orders[r % orders.length]) {
      const { rate, frames, bytes } = await measure(state);
      round[state] = rate;
      if (state === 'watched') Object.assign(round, { frames, bytes });
    }
    results.push(round);
  }
  // What a page costs the dispatcher each period, mostly: one read of it while it runs.
  await enter('plain');
  const liveReads: number[] = [];
  for (let i = 0; i < 40; i++) {
    await sleep(10);
    const started = performance.now();
    metrics.read();
    liveReads.push(performance.now() - started);
  }
  stop.done = true;
  bus.close();
  await producing;
  console.log(JSON.stringify({ rounds: results, liveReadMs: median(liveReads), readMs: await readCost() }));
  process.exit(0);
}

void main();
