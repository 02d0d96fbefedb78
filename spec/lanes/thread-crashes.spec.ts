import {
  fromIterable,
  keyedBatchDispatch,
  keyedDispatch,
  type RetryPolicyOptions,
  retryPolicy,
  ThreadExecutor,
  threadHandler,
} from 'keyed-dispatch';
import { lastValueFrom, type Observable, toArray } from 'rxjs';
import { FIXTURES, type Msg } from './lane-kinds';
import { outcomeOf, waitUntil, within } from './shared-state';

// A crash is blamed on the message that keeps crashing its thread, never on the messages that thread
// merely held. Only thread lanes can lose a thread: event-loop lanes have none to lose.

interface Ran {
  key: string;
  n: number;
  thread: number;
  bytes?: number;
}

type Operator = 'keyedDispatch' | 'keyedBatchDispatch';

/** Runs `messages` through `exitOrWait` on `executor`; records each settlement as `<key><n>:<outcome>`. */
function run(
  operator: Operator,
  executor: ThreadExecutor,
  messages: Msg[],
  settled: string[],
  policy?: RetryPolicyOptions<Msg, string>,
  transfer?: (m: Msg) => ArrayBuffer[],
) {
  const source = fromIterable(messages, {
    onSettled: (m, outcome) => settled.push(`${m.key}${m.n}:${outcome}`),
  });
  const failurePolicy = policy === undefined ? {} : { failurePolicy: retryPolicy(policy) };
  const output: Observable<unknown> =
    operator === 'keyedDispatch'
      ? source.pipe(
          keyedDispatch<Msg, string, Ran[]>({
            executor,
            key: (m) => m.key,
            handle: threadHandler<Msg, Ran[]>(FIXTURES, 'exitOrWait', transfer ? { transfer } : {}),
            ...failurePolicy,
          }),
        )
      : source.pipe(
          keyedBatchDispatch<Msg, string, Ran[]>({
            executor,
            key: (m) => m.key,
            handle: threadHandler<Msg[], Ran[]>(FIXTURES, 'exitOrWait'),
            ...failurePolicy,
          }),
        );
  return outcomeOf(within(lastValueFrom(output.pipe(toArray())), 30_000, 'the output to end'));
}

/** The messages of `keys` keys, `perKey` each, numbered 1.. within each key, keys interleaved. */
function messagesOf(prefix: string, keys: number, perKey: number, extra: Partial<Msg> = {}): Msg[] {
  const messages: Msg[] = [];
  for (let n = 1; n <= perKey; n++)
    for (let k = 0; k < keys; k++) messages.push({ key: `${prefix}${k}`, n, ...extra });
  return messages;
}

/** The `n`s each key ran, in the order they were emitted. */
function ordersOf(values: unknown): Map<string, number[]> {
  const orders = new Map<string, number[]>();
  for (const ran of (values as Ran[][]).flat()) {
    const order = orders.get(ran.key) ?? [];
    order.push(ran.n);
    orders.set(ran.key, order);
  }
  return orders;
}

const deadLetterPolicy = (dead: string[]): RetryPolicyOptions<Msg, string> => ({
  maxAttempts: 2,
  backoff: { initialMs: 10, jitter: 0 },
  deadLetter: (m, error) => void dead.push(`${m.key}${m.n}:${(error as Error).name}`),
});

describe.each<Operator>(['keyedDispatch', 'keyedBatchDispatch'])('a thread crash, with %s', (operator) => {
  let executor: ThreadExecutor;
  beforeEach(() => {
    executor = new ThreadExecutor({ workers: 1 });
  });
  afterEach(() => executor.close());

  it("fails none of another dispatcher's messages its thread held: all 50 of them are done and its output does not error", async () => {
    const settledA: string[] = [];
    const settledB: string[] = [];
    const b = run(operator, executor, messagesOf('b', 10, 5), settledB);
    const a = run(operator, executor, [{ key: 'a', n: 1, exit: true }], settledA);
    const [outcomeA, outcomeB] = await Promise.all([a, b]);
    expect(outcomeB).toEqual({ value: expect.any(Array) });
    expect(settledB.filter((s) => s.endsWith(':done'))).toHaveLength(50);
    expect(outcomeA).toEqual({ error: expect.objectContaining({ name: 'ThreadCrashLoopError' }) });
  });

  it("dead-letters none of another dispatcher's messages its thread held, and only the message that keeps crashing it", async () => {
    const settledA: string[] = [];
    const settledB: string[] = [];
    const deadA: string[] = [];
    const deadB: string[] = [];
    const b = run(operator, executor, messagesOf('b', 10, 5), settledB, deadLetterPolicy(deadB));
    const a = run(operator, executor, [{ key: 'a', n: 1, exit: true }], settledA, deadLetterPolicy(deadA));
    const [outcomeA, outcomeB] = await Promise.all([a, b]);
    expect(outcomeB).toEqual({ value: expect.any(Array) });
    expect(deadB).toEqual([]);
    expect(settledB.filter((s) => s.endsWith(':done'))).toHaveLength(50);
    expect(outcomeA).toEqual({ value: [] });
    expect(deadA).toEqual(['a1:ThreadCrashLoopError']);
    expect(settledA).toEqual(['a1:dead-lettered']);
  });

  it('dead-letters only the message that exits among ten keys; every other message is done, in key order', async () => {
    const settled: string[] = [];
    const dead: string[] = [];
    const messages = messagesOf('k', 10, 6).map((m) =>
      m.key === 'k3' && m.n === 2 ? { ...m, exit: true } : m,
    );
    const outcome = await run(operator, executor, messages, settled, deadLetterPolicy(dead));
    expect(outcome).toEqual({ value: expect.any(Array) });
    expect(dead).toEqual(['k32:ThreadCrashLoopError']);
    expect(settled.filter((s) => !s.endsWith(':done'))).toEqual(['k32:dead-lettered']);
    expect(settled).toHaveLength(60);
    const orders = ordersOf((outcome as { value: unknown }).value);
    for (let k = 0; k < 10; k++) {
      // A message that was running when its thread died runs again (at least once): its key's order,
      // with such repeats removed, is the order it was sent in.
      const order = (orders.get(`k${k}`) ?? []).filter((n, i, all) => all.indexOf(n) === i);
      expect([`k${k}`, order]).toEqual([`k${k}`, k === 3 ? [1, 3, 4, 5, 6] : [1, 2, 3, 4, 5, 6]]);
    }
  });
});

describe('a thread crash while a handler that never ends was running', () => {
  it('holds the other messages back only for a grace while that suspect runs alone, and still blames the one that crashes', async () => {
    const executor = new ThreadExecutor({ workers: 1 });
    const settled: string[] = [];
    const dead: string[] = [];
    const messages: Msg[] = [
      { key: 'h', n: 1, ms: 1e9 },
      { key: 'p', n: 1, exit: true },
      ...messagesOf('k', 5, 3),
    ];
    const subscription = fromIterable(messages, {
      onSettled: (m, outcome) => settled.push(`${m.key}${m.n}:${outcome}`),
    })
      .pipe(
        keyedDispatch<Msg, string, Ran[]>({
          executor,
          key: (m) => m.key,
          handle: threadHandler<Msg, Ran[]>(FIXTURES, 'exitOrWait'),
          failurePolicy: retryPolicy(deadLetterPolicy(dead)),
        }),
      )
      .subscribe({ error: () => {} });
    try {
      await waitUntil(
        () => settled.filter((s) => s.startsWith('k') && s.endsWith(':done')).length === 15,
        20_000,
        'every message of the keys k to be done',
      );
      await waitUntil(() => dead.length > 0, 20_000, 'the crashing message to be dead-lettered');
      expect(dead).toEqual(['p1:ThreadCrashLoopError']);
      expect(settled.filter((s) => !s.endsWith(':done'))).toEqual(['p1:dead-lettered']);
    } finally {
      subscription.unsubscribe();
      await executor.close();
    }
  });
});

describe('a thread crash while messages with transfer lists are held', () => {
  // Not met yet: a buffer moved to a thread is gone with it, so the messages posted there and not
  // started still fail with ThreadExitedError. Meeting it needs the data to move only when the message
  // starts (or a copy kept); this spec turns green, and `failing` must go, once one of those is done.
  it.failing('dead-letters only the message that exits; the others run with their data', async () => {
    const executor = new ThreadExecutor({ workers: 1 });
    try {
      const settled: string[] = [];
      const dead: string[] = [];
      const messages = messagesOf('t', 4, 4).map((m) => ({
        ...m,
        data: new ArrayBuffer(64),
        ...(m.key === 't1' && m.n === 2 ? { exit: true } : {}),
      }));
      const outcome = await run('keyedDispatch', executor, messages, settled, deadLetterPolicy(dead), (m) => [
        m.data as ArrayBuffer,
      ]);
      expect(outcome).toEqual({ value: expect.any(Array) });
      expect(dead).toEqual(['t12:ThreadCrashLoopError']);
      expect(settled.filter((s) => !s.endsWith(':done'))).toEqual(['t12:dead-lettered']);
      const ran = ((outcome as { value: Ran[][] }).value ?? []).flat();
      expect(ran.every((r) => r.bytes === 64)).toBe(true);
    } finally {
      await executor.close();
    }
  });
});
