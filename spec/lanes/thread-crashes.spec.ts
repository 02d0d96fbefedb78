import {
  fromAsyncIterable,
  fromIterable,
  keyedBatchDispatch,
  keyedDispatch,
  type RetryPolicyOptions,
  retryPolicy,
  ThreadExecutor,
  threadHandler,
} from 'keyed-dispatch';
import { lastValueFrom, type Observable, toArray } from 'rxjs';
import { waitFor } from '../support/waits';
import { FIXTURES, type Msg } from './lane-kinds';
import { outcomeOf, within } from './shared-state';

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
  messages: Msg[] | AsyncIterable<Msg>,
  settled: string[],
  policy?: RetryPolicyOptions<Msg, string>,
  transfer?: (m: Msg) => ArrayBuffer[],
) {
  const onSettled = (m: Msg, outcome: string) => settled.push(`${m.key}${m.n}:${outcome}`);
  const source = Array.isArray(messages)
    ? fromIterable(messages, { onSettled })
    : fromAsyncIterable(messages as AsyncIterable<Msg>, { onSettled });
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

// keyedDispatch only: batches reach the same blame on their thread (see the first block), and each of
// these cases takes seconds of crashes.
describe.each<Operator>(['keyedDispatch'])(
  'a thread crash well into the run of the message that causes it, with %s',
  (operator) => {
    // The message exits its thread 1.2 s into each run: past the second that a suspect runs alone
    // before the messages held back join it, so each crash finds it running beside others.
    let executor: ThreadExecutor;
    beforeEach(() => {
      executor = new ThreadExecutor({ workers: 1 });
    });
    afterEach(() => executor.close());

    const slowExit = (key: string): Msg => ({ key, n: 1, exitAfterMs: 1200 });
    const singleDead = (dead: string[]): RetryPolicyOptions<Msg, string> => ({
      maxAttempts: 1,
      deadLetter: (m, error) => void dead.push(`${m.key}${m.n}:${(error as Error).name}`),
    });

    it('errors the output with ThreadCrashLoopError naming the only message, which exits its thread each run', async () => {
      const settled: string[] = [];
      const outcome = await run(operator, executor, [slowExit('p')], settled);
      expect(outcome).toEqual({
        error: expect.objectContaining({
          name: 'ThreadCrashLoopError',
          message: expect.stringContaining('p'),
        }),
      });
    }, 40_000);

    it('dead-letters the message that exits its thread late in each run; every message of the other keys is done, in key order', async () => {
      const settled: string[] = [];
      const dead: string[] = [];
      const messages = [slowExit('p'), ...messagesOf('k', 5, 3)];
      const outcome = await run(operator, executor, messages, settled, deadLetterPolicy(dead));
      expect(outcome).toEqual({ value: expect.any(Array) });
      expect(dead).toEqual(['p1:ThreadCrashLoopError']);
      expect(settled.filter((s) => !s.endsWith(':done'))).toEqual(['p1:dead-lettered']);
      expect(settled).toHaveLength(16);
      const orders = ordersOf((outcome as { value: unknown }).value);
      for (let k = 0; k < 5; k++) {
        const order = (orders.get(`k${k}`) ?? []).filter((n, i, all) => all.indexOf(n) === i);
        expect([`k${k}`, order]).toEqual([`k${k}`, [1, 2, 3]]);
      }
    }, 40_000);

    it.each([
      ['the innocent one posted first', ['b', 'p']],
      ['the innocent one posted last', ['p', 'b']],
    ])(
      'dead-letters only the message that exits late in its run, not a 3 s handler that ran beside it (%s)',
      async (_, keys) => {
        const settled: string[] = [];
        const dead: string[] = [];
        const messages = keys.map((key) => (key === 'p' ? slowExit('p') : { key, n: 1, ms: 3000 }));
        const outcome = await run(operator, executor, messages, settled, singleDead(dead));
        expect(outcome).toEqual({ value: expect.any(Array) });
        expect(dead).toEqual(['p1:ThreadCrashLoopError']);
        expect([...settled].sort()).toEqual(['b1:done', 'p1:dead-lettered']);
      },
      40_000,
    );

    it('dead-letters only the message that exits late in its run while other keys keep arriving; every other message is done, in key order', async () => {
      const settled: string[] = [];
      const dead: string[] = [];
      // p first, then a message of one of 8 keys every 20 ms for about 4 s.
      async function* stream(): AsyncGenerator<Msg> {
        yield slowExit('p');
        for (let i = 0; i < 200; i++) {
          await new Promise((resolve) => setTimeout(resolve, 20));
          yield { key: `s${i % 8}`, n: Math.floor(i / 8) + 1, ms: 30 };
        }
      }
      const outcome = await run(operator, executor, stream(), settled, singleDead(dead));
      expect(outcome).toEqual({ value: expect.any(Array) });
      expect(dead).toEqual(['p1:ThreadCrashLoopError']);
      expect(settled.filter((s) => !s.endsWith(':done'))).toEqual(['p1:dead-lettered']);
      expect(settled).toHaveLength(201);
      const orders = ordersOf((outcome as { value: unknown }).value);
      const expected = Array.from({ length: 25 }, (_, i) => i + 1);
      for (let k = 0; k < 8; k++) {
        const order = (orders.get(`s${k}`) ?? []).filter((n, i, all) => all.indexOf(n) === i);
        expect([`s${k}`, order]).toEqual([`s${k}`, expected]);
      }
    }, 40_000);
  },
);

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
      await waitFor(
        () => settled.filter((s) => s.startsWith('k') && s.endsWith(':done')).length === 15,
        20_000,
        'every message of the keys k to be done',
      );
      await waitFor(() => dead.length > 0, 20_000, 'the crashing message to be dead-lettered');
      expect(dead).toEqual(['p1:ThreadCrashLoopError']);
      expect(settled.filter((s) => !s.endsWith(':done'))).toEqual(['p1:dead-lettered']);
    } finally {
      subscription.unsubscribe();
      await executor.close();
    }
  });
});

describe('a thread crash while messages with transfer lists are held', () => {
  // A message's transferred data moves to its thread only when the thread starts it, so a thread that
  // dies takes along the data of the messages that were running on it, and no other message's.
  let executor: ThreadExecutor;
  beforeEach(() => {
    executor = new ThreadExecutor({ workers: 1 });
  });
  afterEach(() => executor.close());

  /** `perKey` messages of `keys` keys, each with 64 bytes of data to transfer. */
  const withData = (prefix: string, keys: number, perKey: number): Msg[] =>
    messagesOf(prefix, keys, perKey).map((m) => ({ ...m, data: new ArrayBuffer(64) }));
  const dataOf = (m: Msg) => (m.data instanceof ArrayBuffer ? [m.data] : []);

  it('dead-letters only the message that exits; the messages waiting on its thread run with their data', async () => {
    const settled: string[] = [];
    const dead: string[] = [];
    // The first round of the keys t is claimed before x1 exits, or waits behind it; the rest waits.
    const [first, rest] = [withData('t', 4, 1), withData('t', 4, 4).slice(4)];
    const messages = [...first, { key: 'x', n: 1, exit: true }, ...rest];
    const outcome = await run('keyedDispatch', executor, messages, settled, deadLetterPolicy(dead), dataOf);
    expect(outcome).toEqual({ value: expect.any(Array) });
    expect(dead).toEqual(['x1:ThreadCrashLoopError']);
    expect(settled.filter((s) => !s.endsWith(':done'))).toEqual(['x1:dead-lettered']);
    const ran = ((outcome as { value: Ran[][] }).value ?? []).flat();
    expect(ran.map((r) => r.bytes)).toEqual(Array(16).fill(64));
    const orders = ordersOf((outcome as { value: unknown }).value);
    for (let k = 0; k < 4; k++) expect([`t${k}`, orders.get(`t${k}`)]).toEqual([`t${k}`, [1, 2, 3, 4]]);
  });

  it('blames at once the only message running when it exits, whose data went down with its thread; the messages behind it run with theirs', async () => {
    const settled: string[] = [];
    const dead: string[] = [];
    const messages = withData('s', 1, 5).map((m) => (m.n === 2 ? { ...m, exit: true } : m));
    const outcome = await run('keyedDispatch', executor, messages, settled, deadLetterPolicy(dead), dataOf);
    expect(outcome).toEqual({ value: expect.any(Array) });
    expect(dead).toEqual(['s02:ThreadCrashLoopError']);
    expect(settled).toEqual(['s01:done', 's02:dead-lettered', 's03:done', 's04:done', 's05:done']);
    const ran = ((outcome as { value: Ran[][] }).value ?? []).flat();
    expect(ran.map((r) => [r.n, r.bytes])).toEqual([
      [1, 64],
      [3, 64],
      [4, 64],
      [5, 64],
    ]);
  });

  it('fails, of the messages the dead thread held, only those running there beside the one that exits', async () => {
    const settled: string[] = [];
    const dead: string[] = [];
    const messages = withData('t', 4, 4).map((m) => (m.key === 't1' && m.n === 2 ? { ...m, exit: true } : m));
    const outcome = await run('keyedDispatch', executor, messages, settled, deadLetterPolicy(dead), dataOf);
    expect(outcome).toEqual({ value: expect.any(Array) });
    expect(settled).toHaveLength(16);
    // Only a key's oldest unfinished message can be running, so at most one per key: their data went
    // down with the thread, and none of them can run alone to show which one crashed it.
    const failed = settled.filter((s) => !s.endsWith(':done')).map((s) => s.split(':')[0]);
    expect(failed).toContain('t12');
    expect(new Set(failed.map((s) => s.slice(0, 2))).size).toBe(failed.length);
    for (const letter of dead) expect(letter).toMatch(/^t\d\d:(ThreadExitedError|ThreadCrashLoopError)$/);
    expect(dead).toHaveLength(failed.length);
    const ran = ((outcome as { value: Ran[][] }).value ?? []).flat();
    expect(ran.every((r) => r.bytes === 64)).toBe(true);
    // Every message of a key after its failed one (or all of them) is done, in key order.
    const orders = ordersOf((outcome as { value: unknown }).value);
    for (let k = 0; k < 4; k++) {
      const lost = failed.filter((s) => s.startsWith(`t${k}`)).map((s) => Number(s.slice(2)));
      const expected = [1, 2, 3, 4].filter((n) => !lost.includes(n));
      expect([`t${k}`, orders.get(`t${k}`)]).toEqual([`t${k}`, expected]);
    }
  });
});
