// One cell group of the core matrix, in one fresh process: `core-matrix-child <group as JSON>`. Its
// contenders run on the same input, alternating (the order rotated every round), after warm-up runs.
// Prints `{ "rates": { contender: [msgs/s per round] } }` on its last line.
import {
  concatMap,
  defer,
  EMPTY,
  from,
  type GroupedObservable,
  groupBy,
  mergeMap,
  type ObservableInput,
  of,
  Subject,
  Subscriber,
} from 'rxjs';
import { DispatchMetrics, fromIterable, KeyedExecutor, keyedDispatch } from '../../src';
import { handMailboxLoop, handPromiseLoop } from '../baselines/hand-mailbox';
import { pQueuePerKey } from '../baselines/p-queue-per-key';
import { promiseChain } from '../baselines/promise-chain';
import { collect } from '../lib';

export interface Message {
  key: number;
  seq: number;
}

/** A cell group: one handler shape and key count, several contenders measured side by side. */
export interface Group {
  shape: Shape;
  keys: number;
  messages: number;
  /** Warm-up runs of each contender before the measured rounds. */
  warmups: number;
  rounds: number;
  contenders: string[];
  /**
   * Slow contenders that run only in the first `n` rounds and without warm-up (groupBy at 100,000 keys
   * takes tens of seconds a run: its first run warms it up enough to tell it apart).
   */
  limited?: Record<string, number>;
}

/** Handler shapes, as users write them. `EMPTY` emits nothing; the others emit the message. */
export const SHAPES = {
  array: '(m) => [m]',
  of: '(m) => of(m)',
  empty: '(m) => EMPTY',
  async: 'async (m) => m',
  defer: '(m) => defer(() => Promise.resolve(m))',
} as const;
export type Shape = keyof typeof SHAPES;

const handlers: Record<Shape, (m: Message) => ObservableInput<Message>> = {
  array: (m) => [m],
  of: (m) => of(m),
  empty: () => EMPTY,
  async: async (m) => m,
  defer: (m) => defer(() => Promise.resolve(m)),
};

/** What the promise-based baselines run for a Promise shape: the same promise, without the wrapper. */
const promiseHandlers: Partial<Record<Shape, (m: Message) => Promise<Message>>> = {
  async: handlers.async as (m: Message) => Promise<Message>,
  defer: (m) => Promise.resolve(m),
};

/** Messages a plain `Subject` source pushes per event-loop turn, as a hot producer does. */
const SUBJECT_BATCH = 10_000;
const keyOf = (m: Message) => m.key;

/** A run: resolves to the values the pattern emitted (or the messages it finished, for baselines). */
type Run = (input: Message[]) => Promise<number>;

function counted(source: { subscribe: (o: object) => unknown }): Promise<number> {
  return new Promise((resolve, reject) => {
    let n = 0;
    source.subscribe({ next: () => n++, error: reject, complete: () => resolve(n) });
  });
}

/** A plain `Subject` fed in batches, one per event-loop turn, then completed. */
function pushed(input: Message[], subject: Subject<Message>): void {
  let next = 0;
  const batch = () => {
    const end = Math.min(input.length, next + SUBJECT_BATCH);
    for (; next < end; next++) subject.next(input[next]);
    if (next < input.length) setImmediate(batch);
    else subject.complete();
  };
  setImmediate(batch);
}

function ours(shape: Shape, source: string, window: number, extra: string | undefined): Run {
  const executor = new KeyedExecutor();
  // One metrics object per contender, as an application holds one per long-lived dispatcher.
  const stats = extra ? new DispatchMetrics(extra === 'longturns' ? { longTurnMs: 50 } : {}) : undefined;
  const options = { key: keyOf, handle: handlers[shape], executor, maxInFlight: window, stats };
  return async (input) => {
    const watching = stats?.snapshots(100).subscribe();
    try {
      if (source === 'subject') {
        const subject = new Subject<Message>();
        const out = counted(subject.pipe(keyedDispatch(options)));
        pushed(input, subject);
        return await out;
      }
      const from$ = source === 'pulled' ? fromIterable(input) : from(input);
      return await counted(from$.pipe(keyedDispatch(options)));
    } finally {
      watching?.unsubscribe();
    }
  };
}

function groupByConcatMap(shape: Shape, source: string): Run {
  const perKey = mergeMap((g: GroupedObservable<number, Message>) => g.pipe(concatMap(handlers[shape])));
  return (input) => {
    if (source !== 'subject') return counted(from(input).pipe(groupBy(keyOf), perKey));
    const subject = new Subject<Message>();
    const out = counted(subject.pipe(groupBy(keyOf), perKey));
    pushed(input, subject);
    return out;
  };
}

/** A promise-based baseline with a producer that offers while it may and waits for a free slot. */
function offered(make: typeof promiseChain, shape: Shape, window: number): Run {
  const handle = promiseHandlers[shape];
  if (!handle) throw new Error(`no promise form of shape '${shape}'`);
  return (input) =>
    new Promise((resolve) => {
      let taken = 0;
      let finished = 0;
      const pump = () => {
        while (taken < input.length && baseline.offer(input[taken])) taken++;
      };
      const baseline = make(
        keyOf,
        handle,
        () => {
          if (++finished === input.length) resolve(finished);
        },
        pump,
        window,
      );
      pump();
    });
}

/** Counts a handler Observable's values: the least a dispatcher must do to run it. */
class Counted extends Subscriber<Message> {
  values = 0;
  protected override _next(): void {
    this.values++;
  }
}

/**
 * The hand-written loop: with `[m]` it counts each message; with `of(m)` it subscribes to each handler's
 * Observable with a bare Subscriber (they complete while subscribed). What remains is what no dispatcher
 * can avoid: RxJS's own cost of creating and subscribing to `of(m)`. With `async` it is the minimal
 * Promise loop (see `handPromiseLoop`): the Map of keys and the handlers' Promises, nothing more.
 */
function handLoop(shape: Shape, window: number): Run {
  if (shape === 'async') {
    const handle = promiseHandlers.async as (m: Message) => Promise<Message>;
    return (input) => handPromiseLoop(input, keyOf, handle, window);
  }
  if (shape !== 'array' && shape !== 'of')
    throw new Error(`the hand loop runs [m], of(m) and async only, not ${shape}`);
  return async (input) => {
    let n = 0;
    const handle =
      shape === 'array'
        ? () => n++
        : (m: Message) => {
            const subscriber = new Counted();
            of(m).subscribe(subscriber);
            n += subscriber.values;
          };
    handMailboxLoop(input[Symbol.iterator](), keyOf, handle, window);
    return n;
  };
}

/** The contender named `id`: `ours:<pulled|plain|subject>:<window>[:metrics|:longturns]`, `groupBy:<plain|subject>`, `chain:<window>`, `pqueue:<window>`, `hand:<window>`. */
export function contender(id: string, shape: Shape): Run {
  const [kind, a, b, c] = id.split(':');
  switch (kind) {
    case 'ours':
      return ours(shape, a, Number(b), c);
    case 'groupBy':
      return groupByConcatMap(shape, a);
    case 'chain':
      return offered(promiseChain, shape, Number(a));
    case 'pqueue':
      return offered(pQueuePerKey, shape, Number(a));
    case 'hand':
      return handLoop(shape, Number(a));
    default:
      throw new Error(`unknown contender '${id}'`);
  }
}

/** Values a contender must have emitted (baselines count finished messages; `EMPTY` emits none). */
function expected(id: string, shape: Shape, messages: number): number {
  const emits = id.startsWith('ours') || id.startsWith('groupBy');
  return emits && shape === 'empty' ? 0 : messages;
}

async function main(): Promise<void> {
  const group = JSON.parse(process.argv[2]) as Group;
  const input = new Array<Message>(group.messages);
  for (let i = 0; i < group.messages; i++) input[i] = { key: i % group.keys, seq: i };
  const runs = group.contenders.map((id) => contender(id, group.shape));
  const measured = async (i: number) => {
    const started = performance.now();
    const n = await runs[i](input);
    const seconds = (performance.now() - started) / 1000;
    const want = expected(group.contenders[i], group.shape, group.messages);
    if (n !== want) throw new Error(`${group.contenders[i]} gave ${n} of ${want}`);
    return group.messages / seconds;
  };
  // Building the input left garbage: collected once. No collection between runs after that (a forced one
  // drops every contender's optimized code; see `measured` in core-child.ts): each run pays for its garbage.
  collect();
  const roundsOf = (i: number) => group.limited?.[group.contenders[i]] ?? group.rounds;
  for (let w = 0; w < group.warmups; w++) {
    for (let i = 0; i < runs.length; i++) if (!group.limited?.[group.contenders[i]]) await measured(i);
  }
  const rates: Record<string, number[]> = Object.fromEntries(group.contenders.map((id) => [id, []]));
  for (let r = 0; r < group.rounds; r++) {
    for (let j = 0; j < runs.length; j++) {
      const i = (j + r) % runs.length;
      if (r < roundsOf(i)) rates[group.contenders[i]].push(await measured(i));
    }
  }
  console.log(JSON.stringify({ rates }));
  process.exit(0);
}

if (require.main === module) void main();
