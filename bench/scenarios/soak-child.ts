// One soak run: `soak-child <seconds>`. A bounded random workload through keyedDispatch for that long,
// sampling the heap (after a collection) and the dispatcher's metrics once a second. Prints
// `{ heapMb: number[], settledPerSecond: number[], p99Ms: number[], handled, orderViolations }` last.
import { type Observable, timer } from 'rxjs';
import { DispatchMetrics, KeyedExecutor, keyedDispatch, LocalBus } from '../../src';
import type { HandlerContext } from '../../src/engine/mailbox';
import { collect } from '../lib';

interface Message {
  key: number;
  /** Position of the message among its key's messages, from 0. */
  seq: number;
  kind: number;
}

const KEYS = 10_000;
/** Unsettled messages the producer allows itself: what keeps the workload bounded. */
const OUTSTANDING = 20_000;
const BATCH = 500;

/** mulberry32: a seeded generator, so every run draws the same workload. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2]);
  const rnd = random(42);
  const nextSeq = new Int32Array(KEYS);
  const lastSeen = new Int32Array(KEYS).fill(-1);
  let orderViolations = 0;
  let sent = 0;
  let handled = 0;
  const bus = new LocalBus<Message>();
  const metrics = new DispatchMetrics();
  const handle = (
    m: Message,
    ctx: HandlerContext<number>,
  ): Observable<Message> | Promise<Message> | Message[] => {
    if (m.seq !== lastSeen[m.key] + 1) orderViolations++;
    lastSeen[m.key] = m.seq;
    // 60 % synchronous, 30 % a promise, 10 % a 1–4 ms timer on the key's lane.
    if (m.kind < 0.6) return [m];
    if (m.kind < 0.9) return Promise.resolve(m);
    return new Promise<Message>((resolve) =>
      timer(1 + (Math.floor(m.kind * 40) % 4), ctx.scheduler).subscribe(() => resolve(m)),
    );
  };
  const subscription = bus
    .receive()
    .pipe(
      keyedDispatch({ executor: new KeyedExecutor(), stats: metrics, key: (m: Message) => m.key, handle }),
    )
    .subscribe(() => handled++);

  const heapMb: number[] = [];
  const settledPerSecond: number[] = [];
  const p99Ms: number[] = [];
  const watching = metrics.snapshots(1000).subscribe((s) => {
    collect();
    heapMb.push(process.memoryUsage().heapUsed / 2 ** 20);
    settledPerSecond.push(s.settledPerSecond);
    p99Ms.push(s.windowLatency.p99Ms);
  });

  const endAt = performance.now() + seconds * 1000;
  await new Promise<void>((resolve) => {
    const produce = () => {
      if (performance.now() >= endAt) return resolve();
      for (let i = 0; i < BATCH && sent - handled < OUTSTANDING; i++) {
        // Keys skewed towards the low ones (a few warm keys, a long tail), bounded to KEYS.
        const key = Math.floor(rnd() ** 2 * KEYS);
        void bus.send({ key, seq: nextSeq[key]++, kind: rnd() });
        sent++;
      }
      setImmediate(produce);
    };
    produce();
  });
  // Drain what is left, then stop.
  while (handled < sent) await new Promise((resolve) => setTimeout(resolve, 10));
  watching.unsubscribe();
  subscription.unsubscribe();
  console.log(JSON.stringify({ heapMb, settledPerSecond, p99Ms, handled, orderViolations }));
  process.exit(0);
}

void main();
