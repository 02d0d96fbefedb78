// One measured run: `hot-key-child <ours|groupBy|wow> <hot|uniform>`. Prints
// `{ "coldP50Ms": n, "coldP99Ms": n, "msgsPerSecond": n }` on its last line.
import { concatMap, groupBy, mergeMap, type Observable, Subject } from 'rxjs';
import { KeyedExecutor, keyedDispatch, LocalBus } from '../../src';
import { collect } from '../lib';

interface Message {
  key: number;
  seq: number;
  /** When the message arrived (its batch was produced), in performance.now() ms. */
  at: number;
}

const MESSAGES = 1_000_000;
const KEYS = 1_000;
/** Messages arriving together, one batch per event-loop turn: a paced source, not one burst. */
const BATCH = 1_000;
/** Wow 9.2 hashes keys into this many groups, each served by one concatMap. */
const WOW_GROUPS = 128;

/** Key of message i: in `hot` mode every other message goes to key 0, the rest spread over the other 999. */
function keyOf(i: number, hot: boolean): number {
  if (!hot) return i % KEYS;
  return i % 2 === 0 ? 0 : 1 + ((i * 7919) % (KEYS - 1));
}

/** The handler: asynchronous (a store write would be), resolving on the microtask queue. */
const handle = (m: Message): Promise<Message> => Promise.resolve(m);

type Contender = (produce: (emit: (m: Message) => void) => void, done: (m: Message) => void) => void;

const contenders: Record<string, Contender> = {
  ours(produce, done) {
    const bus = new LocalBus<Message>();
    const executor = new KeyedExecutor();
    bus
      .receive()
      .pipe(keyedDispatch({ executor, key: (m: Message) => m.key, handle }))
      .subscribe(done);
    produce((m) => void bus.send(m));
  },
  groupBy(produce, done) {
    const subject = new Subject<Message>();
    subject
      .pipe(
        groupBy((m) => m.key),
        mergeMap((g) => g.pipe(concatMap(handle))),
      )
      .subscribe(done);
    produce((m) => subject.next(m));
  },
  wow(produce, done) {
    const subject = new Subject<Message>();
    subject
      .pipe(
        groupBy((m) => m.key % WOW_GROUPS),
        mergeMap((g): Observable<Message> => g.pipe(concatMap(handle))),
      )
      .subscribe(done);
    produce((m) => subject.next(m));
  },
};

function runOnce(
  contender: Contender,
  total: number,
  hot: boolean,
): Promise<{ latencies: Float64Array; ms: number }> {
  return new Promise((resolve) => {
    const latencies = new Float64Array(total);
    let cold = 0;
    let finished = 0;
    const started = performance.now();
    contender(
      (emit) => {
        let next = 0;
        const batch = () => {
          const at = performance.now();
          const end = Math.min(total, next + BATCH);
          for (; next < end; next++) emit({ key: keyOf(next, hot), seq: next, at });
          if (next < total) setImmediate(batch);
        };
        batch();
      },
      (m) => {
        if (m.key !== 0) latencies[cold++] = performance.now() - m.at;
        if (++finished === total)
          resolve({ latencies: latencies.subarray(0, cold), ms: performance.now() - started });
      },
    );
  });
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

async function main(): Promise<void> {
  const [name, mode] = process.argv.slice(2);
  const contender = contenders[name];
  if (!contender || (mode !== 'hot' && mode !== 'uniform'))
    throw new Error(`usage: hot-key-child <ours|groupBy|wow> <hot|uniform>`);
  await runOnce(contender, 100_000, mode === 'hot'); // warm-up
  collect();
  const { latencies, ms } = await runOnce(contender, MESSAGES, mode === 'hot');
  const sorted = latencies.sort();
  console.log(
    JSON.stringify({
      coldP50Ms: percentile(sorted, 50),
      coldP99Ms: percentile(sorted, 99),
      msgsPerSecond: MESSAGES / (ms / 1000),
    }),
  );
  process.exit(0);
}

void main();
