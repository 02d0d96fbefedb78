// One measured run: `memory-child <ours|groupBy>`. Prints `{ "beforeMb": n, "afterMb": n }` on its last line:
// the heap with the pipeline subscribed and idle, before and after 1,000,000 distinct keys passed through it
// (one message each), both after a full collection. The pipeline stays subscribed: its source never completes.
import { concatMap, groupBy, mergeMap, Subject } from 'rxjs';
import { KeyedExecutor, keyedDispatch, LocalBus } from '../../src';
import { collect } from '../lib';

interface Message {
  key: number;
}

const KEYS = 1_000_000;
/** Messages produced per event-loop turn. */
const BATCH = 10_000;

type Pipeline = (done: () => void) => (m: Message) => void;

const pipelines: Record<string, Pipeline> = {
  ours(done) {
    const bus = new LocalBus<Message>();
    bus
      .receive()
      .pipe(
        keyedDispatch({
          executor: new KeyedExecutor(),
          key: (m: Message) => m.key,
          handle: (m: Message) => [m],
        }),
      )
      .subscribe(done);
    return (m) => void bus.send(m);
  },
  groupBy(done) {
    // Without a duration selector: how groupBy is usually written.
    const subject = new Subject<Message>();
    subject
      .pipe(
        groupBy((m) => m.key),
        mergeMap((g) => g.pipe(concatMap((m) => [m]))),
      )
      .subscribe(done);
    return (m) => subject.next(m);
  },
};

function heapMb(): number {
  collect();
  collect();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

async function main(): Promise<void> {
  const pipeline = pipelines[process.argv[2]];
  if (!pipeline) throw new Error('usage: memory-child <ours|groupBy>');
  let handled = 0;
  let drained: () => void = () => {};
  const finished = new Promise<void>((resolve) => (drained = resolve));
  const send = pipeline(() => {
    if (++handled === KEYS) drained();
  });
  const beforeMb = heapMb();
  let next = 0;
  const batch = () => {
    const end = Math.min(KEYS, next + BATCH);
    for (; next < end; next++) send({ key: next });
    if (next < KEYS) setImmediate(batch);
  };
  batch();
  await finished;
  // Let settlements and the bus's bookkeeping of the last batch run out before measuring.
  await new Promise((resolve) => setImmediate(resolve));
  const afterMb = heapMb();
  console.log(JSON.stringify({ beforeMb, afterMb }));
  process.exit(0);
}

void main();
