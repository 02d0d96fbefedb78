// `core-heap-child`: the heap with a keyedDispatch pipeline subscribed to a plain `Subject` (async handler),
// before and after a burst of 1,000,000 distinct keys (one message each, pushed at once), each after a full
// collection. The pipeline stays subscribed: the Subject never completes. "Before" is the pipeline as it
// runs in service, after a warm-up burst of 10,000 keys (its pool of drained mailboxes filled, its code
// compiled); `idleMb` is the heap before anything passed. Prints `{ idleMb, beforeMb, afterMb }`.
import { Subject } from 'rxjs';
import { KeyedExecutor, keyedDispatch } from '../../src';
import { collect } from '../lib';

export const HEAP_KEYS = 1_000_000;
const WARM_UP_KEYS = 10_000;

function heapMb(): number {
  collect();
  collect();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

async function main(): Promise<void> {
  const subject = new Subject<{ key: number }>();
  let handled = 0;
  let drained = () => {};
  subject
    .pipe(keyedDispatch({ executor: new KeyedExecutor(), key: (m) => m.key, handle: async (m) => m }))
    .subscribe(() => {
      if (--handled === 0) drained();
    });
  /** Pushes `count` distinct keys at once (from `first`) and waits until all are handled. */
  const burst = async (first: number, count: number) => {
    const done = new Promise<void>((resolve) => (drained = resolve));
    handled = count;
    for (let key = first; key < first + count; key++) subject.next({ key });
    await done;
    // Let the last settlements run out before measuring.
    await new Promise((resolve) => setImmediate(resolve));
  };
  const idleMb = heapMb();
  await burst(-WARM_UP_KEYS, WARM_UP_KEYS);
  const beforeMb = heapMb();
  await burst(0, HEAP_KEYS);
  const afterMb = heapMb();
  console.log(JSON.stringify({ idleMb, beforeMb, afterMb }));
  process.exit(0);
}

void main();
