import { join } from 'node:path';
import {
  DispatchRuntime,
  DispatchStats,
  dispatchComponent,
  type FailureReport,
  fromIterable,
  KeyedExecutor,
  keyedBatchDispatch,
  keyedDispatch,
  LocalBus,
  retryPolicy,
  ThreadExecutor,
  threadHandler,
} from 'keyed-dispatch';
import { from, lastValueFrom, mergeMap, type Observable, type OperatorFunction, toArray } from 'rxjs';
import { outcomeOf, within } from '../lanes/shared-state';
import { waitFor } from '../support/waits';

const RETRY_HANDLERS = join(__dirname, '..', 'fixtures', 'retry-handlers.js');

/** What `flaky` writes, in memory the threads share (see retry-handlers.js). */
class Journal {
  readonly log = new Int32Array(new SharedArrayBuffer(4 * 256));
  readonly at = new Float64Array(new SharedArrayBuffer(8 * 256));
  readonly runs = new Int32Array(new SharedArrayBuffer(4 * 64));

  runsOf(id: number): number {
    return Atomics.load(this.runs, id);
  }
}

interface Msg {
  key: string;
  id: number;
  journal: Journal;
  fails?: number;
}

interface Ran {
  key: string;
  id: number;
  run: number;
}

/** One kind of lane, with its executor and the `flaky` handlers named for it. */
const laneKinds = [
  {
    name: 'event-loop lanes',
    executor: () => new KeyedExecutor({ lanes: 2 }),
    one: () => require(RETRY_HANDLERS).flaky,
    batch: () => require(RETRY_HANDLERS).flakyBatch,
  },
  {
    name: 'thread lanes',
    executor: () => new ThreadExecutor({ workers: 2 }),
    one: () => threadHandler<Msg, Ran>(RETRY_HANDLERS, 'flaky'),
    batch: () => threadHandler<Msg[], Ran[]>(RETRY_HANDLERS, 'flakyBatch'),
  },
] as const;

type Kind = (typeof laneKinds)[number];

/** Options every operator below takes, besides its handler. */
interface Common {
  executor: KeyedExecutor | ThreadExecutor;
  key: (m: Msg) => string;
  stats?: DispatchStats;
  failurePolicy?: 'error';
}

/** Both operators, each emitting one `Ran` per handled message. */
const operators = [
  {
    name: 'keyedDispatch',
    pipe: (kind: Kind, options: Common): OperatorFunction<Msg, Ran> =>
      keyedDispatch<Msg, string, Ran>({ ...options, handle: kind.one() }),
  },
  {
    name: 'keyedBatchDispatch',
    pipe:
      (kind: Kind, options: Common): OperatorFunction<Msg, Ran> =>
      (source: Observable<Msg>) =>
        source.pipe(
          keyedBatchDispatch<Msg, string, Ran[]>({ ...options, handle: kind.batch() }),
          mergeMap((ran) => ran),
        ),
  },
] as const;

const cases = laneKinds.flatMap((kind) =>
  operators.map((operator) => [`${operator.name} on ${kind.name}`, kind, operator] as const),
);

describe.each(cases)('the default failure policy, %s', (_name, kind, operator) => {
  let executor: KeyedExecutor | ThreadExecutor;
  let journal: Journal;
  let logged: unknown[][];
  beforeEach(() => {
    executor = kind.executor();
    journal = new Journal();
    logged = [];
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await executor.close();
  });

  /** Sends `messages` on a LocalBus, closes it, and runs them through the operator with no failure policy. */
  function run(messages: Msg[], options: Partial<Common> = {}) {
    const bus = new LocalBus<Msg>();
    const settled: string[] = [];
    const stats = new DispatchStats();
    for (const m of messages) void bus.send(m);
    bus.close();
    const output = lastValueFrom(
      bus
        .receive({ onSettled: (m, outcome) => settled.push(`${m.id} ${outcome}`) })
        .pipe(operator.pipe(kind, { executor, key: (m) => m.key, stats, ...options }), toArray()),
    );
    return { outcome: outcomeOf(within(output, 20_000, 'the output to end')), settled, stats };
  }

  const msg = (key: string, id: number, extra: Partial<Msg> = {}): Msg => ({ key, id, journal, ...extra });

  it("retries a failing message of a LocalBus in its key's mailbox, unsettled while it fails, while every other key flows", async () => {
    // What was settled at each failure the default reports: never the failing message.
    jest.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
      logged.push([...args, [...settled]]);
    });
    const others = Array.from({ length: 12 }, (_, i) => msg(`k${i % 4}`, i + 1));
    const { outcome, settled, stats } = run([msg('a', 0, { fails: 2 }), ...others, msg('a', 13)]);

    const result = await outcome;
    expect(result).toHaveProperty('value');
    const values = (result as { value: Ran[] }).value;
    expect(values.map((v) => v.id).sort((x, y) => x - y)).toEqual(Array.from({ length: 14 }, (_, i) => i));
    expect(journal.runsOf(0)).toBe(3);
    expect(values.find((v) => v.id === 0)?.run).toBe(3);
    // The key's next message waited for it.
    expect(values.findIndex((v) => v.id === 13)).toBeGreaterThan(values.findIndex((v) => v.id === 0));
    expect(settled.filter((s) => s.startsWith('0 '))).toEqual(['0 done']);
    expect(settled).toHaveLength(14);
    expect(settled.every((s) => s.endsWith(' done'))).toBe(true);
    expect(logged).toHaveLength(2);
    for (const [text, , settledThen] of logged) {
      expect(text).toMatch(/attempt [12] at the message of key a failed; retrying in \d+ ms/);
      expect(settledThen).not.toContain('0 done');
    }
    expect(stats.snapshot()).toMatchObject({ failedAttempts: 2, failed: 0 });
  });

  it('settles a message whose key selector fails as failed, logged and counted, without erroring the output', async () => {
    jest.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
      logged.push(args);
    });
    const keyless = { id: 5, journal } as unknown as Msg;
    const { outcome, settled, stats } = run([msg('a', 0), keyless, msg('b', 1), msg('a', 2)]);

    const result = await outcome;
    expect(result).toHaveProperty('value');
    expect((result as { value: Ran[] }).value.map((v) => v.id).sort()).toEqual([0, 1, 2]);
    expect(journal.runsOf(5)).toBe(0);
    expect(settled).toContain('5 failed');
    expect(settled.filter((s) => s.endsWith(' done'))).toHaveLength(3);
    expect(logged).toHaveLength(1);
    expect(logged[0]?.[0]).toMatch(/a message whose key selector failed/);
    expect(stats.snapshot()).toMatchObject({ failedAttempts: 1, failed: 1 });
  });

  it("errors a LocalBus's output with the handler's error when failurePolicy is 'error'", async () => {
    const { outcome, settled } = run([msg('a', 0, { fails: 1 }), msg('b', 1)], { failurePolicy: 'error' });
    expect(await outcome).toEqual({
      error: expect.objectContaining({ message: 'run 1 of message 0 failed' }),
    });
    expect(settled).not.toContain('0 done');
  });
});

describe.each(laneKinds.map((kind) => [kind.name, kind] as const))(
  'sources without a default, %s',
  (_name, kind) => {
    let executor: KeyedExecutor | ThreadExecutor;
    beforeEach(() => {
      executor = kind.executor();
    });
    afterEach(() => executor.close());

    const messages = (journal = new Journal()): Msg[] => [
      { key: 'a', id: 0, journal, fails: 1 },
      { key: 'b', id: 1, journal },
    ];

    it.each([
      ['a plain Observable', () => from(messages())],
      ['fromIterable', () => fromIterable(messages())],
    ])("%s keeps RxJS semantics: a handler's error errors the output", async (_source, source) => {
      const error = await lastValueFrom(
        (source() as Observable<Msg>).pipe(
          keyedDispatch<Msg, string, Ran>({ executor, key: (m) => m.key, handle: kind.one() }),
        ),
      ).catch((err: unknown) => err);
      expect(error).toMatchObject({ message: expect.stringMatching(/^run \d+ of message 0 failed$/) });
    });
  },
);

describe.each(laneKinds.map((kind) => [kind.name, kind] as const))(
  'retryPolicy onFailure, %s',
  (_name, kind) => {
    let executor: KeyedExecutor | ThreadExecutor;
    beforeEach(() => {
      executor = kind.executor();
    });
    afterEach(() => executor.close());

    it('is told each failed attempt with the message, its key, the attempt and the delay before the next', async () => {
      const journal = new Journal();
      const reports: Array<FailureReport<Msg, string>> = [];
      const values = await lastValueFrom(
        fromIterable([{ key: 'a', id: 0, journal, fails: 2 }]).pipe(
          keyedDispatch<Msg, string, Ran>({
            executor,
            key: (m) => m.key,
            handle: kind.one(),
            failurePolicy: retryPolicy({
              maxAttempts: Number.POSITIVE_INFINITY,
              backoff: { initialMs: 10, jitter: 0 },
              onFailure: (report) => reports.push(report),
            }),
          }),
          toArray(),
        ),
      );
      expect(values).toEqual([expect.objectContaining({ id: 0, run: 3 })]);
      expect(reports).toEqual([
        {
          message: expect.objectContaining({ id: 0 }),
          key: 'a',
          attempt: 1,
          error: expect.objectContaining({ message: 'run 1 of message 0 failed' }),
          source: undefined,
          retryInMs: 10,
        },
        expect.objectContaining({ attempt: 2, retryInMs: 20 }),
      ]);
    });

    it.each([
      [
        'throws',
        () => {
          throw new Error('hook broke');
        },
      ],
      ['rejects', () => Promise.reject(new Error('hook broke'))],
    ])('that %s breaks nothing: the message is retried and handled', async (_how, onFailure) => {
      const journal = new Journal();
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => unhandled.push(reason);
      process.on('unhandledRejection', onUnhandled);
      try {
        const values = await lastValueFrom(
          from<Msg[]>([
            { key: 'a', id: 0, journal, fails: 1 },
            { key: 'b', id: 1, journal },
          ]).pipe(
            keyedDispatch<Msg, string, Ran>({
              executor,
              key: (m) => m.key,
              handle: kind.one(),
              failurePolicy: retryPolicy({ backoff: { initialMs: 5 }, onFailure: onFailure as () => void }),
            }),
            toArray(),
          ),
        );
        expect(values.map((v) => v.id).sort()).toEqual([0, 1]);
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(unhandled).toEqual([]);
      } finally {
        process.off('unhandledRejection', onUnhandled);
      }
    });
  },
);

describe('the default failure policy in a DispatchRuntime', () => {
  it('retries a failing message of a LocalBus component in its mailbox while another component keeps running', async () => {
    jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const journal = new Journal();
    const failing = new LocalBus<Msg>();
    const healthy = new LocalBus<Msg>();
    const handled: number[] = [];
    const handle = async (m: Msg): Promise<void> => {
      if (journal.runs[m.id]++ < (m.fails ?? 0)) throw new Error(`run of message ${m.id} failed`);
      handled.push(m.id);
    };
    const runtime = new DispatchRuntime({
      executor: new KeyedExecutor({ lanes: 2 }),
      components: [
        dispatchComponent({
          name: 'failing',
          source: failing.receive(),
          dispatch: { key: (m: Msg) => m.key, handle },
        }),
        dispatchComponent({
          name: 'healthy',
          source: healthy.receive(),
          dispatch: { key: (m: Msg) => m.key, handle },
        }),
      ],
    }).start();
    try {
      await failing.send({ key: 'a', id: 0, journal, fails: 2 });
      for (let id = 1; id <= 20; id++) await healthy.send({ key: `k${id % 4}`, id, journal });
      await waitFor(() => handled.length === 21, 10_000, 'every message handled');
      expect(journal.runsOf(0)).toBe(3);
    } finally {
      const report = await runtime.stopGracefully({ timeoutMs: 5_000 });
      expect(report.components.map((c) => c.state)).toEqual(['drained', 'drained']);
      jest.restoreAllMocks();
    }
  });
});

describe('the default failure policy on thread lanes, for a message that takes its thread down', () => {
  it('settles that message failed once it is blamed, instead of retrying it (and killing a thread) for ever, while the other keys finish', async () => {
    const executor = new ThreadExecutor({ workers: 1 });
    const bus = new LocalBus<{ key: string; n: number; exit?: boolean }>();
    const settled: string[] = [];
    const errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const output = outcomeOf(
        lastValueFrom(
          bus.receive({ onSettled: (m, outcome) => settled.push(`${m.key}${m.n}:${outcome}`) }).pipe(
            keyedDispatch({
              executor,
              key: (m) => m.key,
              handle: threadHandler<{ key: string; n: number; exit?: boolean }, unknown>(
                join(__dirname, '..', 'fixtures', 'lane-handlers.js'),
                'exitOrWait',
              ),
            }),
            toArray(),
          ),
        ),
      );
      await bus.send({ key: 'p', n: 1, exit: true });
      for (let n = 1; n <= 5; n++) for (const key of ['a', 'b', 'c']) await bus.send({ key, n });
      await waitFor(() => settled.length === 16, 20_000, 'every message to be settled');
      expect(settled.filter((s) => !s.endsWith(':done'))).toEqual(['p1:failed']);
      expect(errors.mock.calls.map((call) => call.map(String).join(' ')).join('\n')).toContain(
        'ThreadCrashLoopError',
      );
      bus.close();
      expect(await within(output, 10_000, 'the output to complete')).toEqual({ value: expect.any(Array) });
    } finally {
      errors.mockRestore();
      await executor.close();
    }
  });
});
