import {
  fromIterable,
  KeyedExecutor,
  keyedDispatch,
  ThreadCrashLoopError,
  ThreadExecutor,
  threadHandler,
} from 'keyed-dispatch';
import { lastValueFrom, toArray } from 'rxjs';
import { byKey, FIXTURES, type Msg, type Ran } from './lane-kinds';

function crashCounter(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4));
}

/** Key `victim` (thread 0) has messages 1..5, the third of which kills its thread; key `bystander` (thread 1) has 1..5. */
async function runThroughCrash(crash: string, executor: ThreadExecutor) {
  const crashes = crashCounter();
  const messages: Msg[] = [];
  for (let n = 1; n <= 5; n++) {
    messages.push({ key: 'victim', n, ...(n === 3 ? { crash, crashes } : {}) });
    messages.push({ key: 'bystander', n });
  }
  const settled: string[] = [];
  const values = await runOnThreads(executor, messages, 'crashing', settled);
  return { values: byKey(values), settled, crashes: crashes[0] };
}

/**
 * Runs `messages` through the fixture handler `exportName` on `executor`'s threads and collects what it
 * emits; each settlement is recorded in `settled` as `<key><n>:<outcome>`.
 */
function runOnThreads(executor: ThreadExecutor, messages: Msg[], exportName: string, settled: string[]) {
  return lastValueFrom(
    fromIterable(messages, { onSettled: (m, outcome) => settled.push(`${m.key}${m.n}:${outcome}`) }).pipe(
      keyedDispatch<Msg, string, Ran>({
        executor,
        key: (m) => m.key,
        handle: threadHandler(FIXTURES, exportName),
      }),
      toArray(),
    ),
  );
}

describe('thread lanes', () => {
  describe.each([
    ['calls process.exit', 'exit', {}],
    ['throws an uncaught error', 'uncaught', {}],
    [
      'exceeds its resourceLimits',
      'heap',
      { resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 4 } },
    ],
  ])('when a thread dies because a handler %s', (_what, crash, options) => {
    it('replaces the thread and runs the messages it held again, in per-key order, leaving other threads alone', async () => {
      const executor = new ThreadExecutor({ workers: 2, ...options });
      try {
        const { values, settled, crashes } = await runThroughCrash(crash, executor);
        expect(crashes).toBe(2); // killed once, then ran again on the replacement
        const victim = values.get('victim') ?? [];
        const bystander = values.get('bystander') ?? [];
        expect(victim[0].lane).not.toBe(bystander[0].lane);
        // Values emitted before the crash may be emitted again (at-least-once); the last run is complete and in order.
        expect(victim.slice(-5).map((v) => v.n)).toEqual([1, 2, 3, 4, 5]);
        expect(new Set(victim.map((v) => v.lane)).size).toBe(1);
        expect(bystander.map((v) => v.n)).toEqual([1, 2, 3, 4, 5]);
        expect(new Set(bystander.map((v) => v.thread)).size).toBe(1);
        expect(settled.filter((s) => s.startsWith('victim'))).toEqual(
          [1, 2, 3, 4, 5].map((n) => `victim${n}:done`),
        );
        expect(settled.filter((s) => s.startsWith('bystander'))).toEqual(
          [1, 2, 3, 4, 5].map((n) => `bystander${n}:done`),
        );
      } finally {
        await executor.close();
      }
    });
  });

  it('fails a message that crashes its thread again when it runs alone on the replacement with ThreadCrashLoopError', async () => {
    const executor = new ThreadExecutor({ workers: 2, maxRespawnsPerMinute: 2 });
    try {
      const crashes = crashCounter();
      const settled: string[] = [];
      const run = lastValueFrom(
        fromIterable<Msg>([{ key: 'poison', n: 1, crash: 'exit', always: true, crashes }], {
          onSettled: (m, outcome) => settled.push(`${m.key}:${outcome}`),
        }).pipe(
          keyedDispatch<Msg, string, Ran>({
            executor,
            key: (m) => m.key,
            handle: threadHandler(FIXTURES, 'crashing'),
          }),
        ),
      );
      await expect(run).rejects.toBeInstanceOf(ThreadCrashLoopError);
      expect(crashes[0]).toBe(2); // its first run, then alone on the replacement
      expect(settled).toEqual(['poison:failed']);
    } finally {
      await executor.close();
    }
  });

  it('keeps a respawn budget per lane: a crash loop on one lane does not stop another lane from replacing its thread', async () => {
    const executor = new ThreadExecutor({ workers: 2, maxRespawnsPerMinute: 1 });
    const crashingOn = (messages: Msg[], settled: string[]) =>
      runOnThreads(executor, messages, 'crashing', settled);
    try {
      // The poison message spends its lane's one respawn, then is blamed; the lane waits for its budget.
      const poison = crashCounter();
      const poisonSettled: string[] = [];
      await expect(
        crashingOn([{ key: 'poison', n: 1, crash: 'exit', always: true, crashes: poison }], poisonSettled),
      ).rejects.toBeInstanceOf(ThreadCrashLoopError);
      expect(poison[0]).toBe(2);
      // The next key goes to the other lane (the poisoned one is down); its thread dies once and is replaced.
      const once = crashCounter();
      const settled: string[] = [];
      const values = await crashingOn(
        [
          { key: 'k', n: 1, crash: 'exit', crashes: once },
          { key: 'k', n: 2 },
        ],
        settled,
      );
      expect(once[0]).toBe(2); // the crash, then the run on the replacement
      expect(values.map((v) => v.n)).toEqual([1, 2]);
      expect(new Set(values.map((v) => v.thread)).size).toBe(1);
      expect(settled).toEqual(['k1:done', 'k2:done']);
    } finally {
      await executor.close();
    }
  });

  it('fails only the message that cannot be cloned when its batch is posted', async () => {
    const executor = new ThreadExecutor({ workers: 1 });
    try {
      const settled: string[] = [];
      const messages: Msg[] = [
        { key: 'a', n: 1 },
        { key: 'b', n: 2, notCloneable: () => 0 },
        { key: 'c', n: 3 },
      ];
      const run = runOnThreads(executor, messages, 'echo', settled);
      await expect(run).rejects.toMatchObject({
        name: 'TypeError',
        message: expect.stringMatching(
          /^ThreadExecutor: the message of key b cannot be cloned to a thread lane \(DataCloneError: /,
        ),
        cause: expect.objectContaining({ name: 'DataCloneError' }),
      });
      // The three messages went out in one batch; the others were posted on their own and not failed.
      expect(settled).toEqual(['b2:failed']);
    } finally {
      await executor.close();
    }
  });

  it.each([
    ['a symbol', (m: Msg) => Symbol(m.key), 'Symbol(b)'],
    ['an object holding a function', (m: Msg) => ({ key: m.key, toString: () => m.key }), 'b'],
  ])(
    'fails a message whose key (%s) cannot be cloned with an error naming the key and the `key` option',
    async (_what, key, shown) => {
      const executor = new ThreadExecutor({ workers: 1 });
      try {
        const run = lastValueFrom(
          fromIterable<Msg>([{ key: 'b', n: 1 }]).pipe(
            keyedDispatch<Msg, unknown, Ran>({ executor, key, handle: threadHandler(FIXTURES, 'echo') }),
          ),
        );
        await expect(run).rejects.toMatchObject({
          name: 'TypeError',
          message: expect.stringMatching(
            new RegExp(
              `^ThreadExecutor: the key ${shown.replace(/[()]/g, '\\$&')} cannot be cloned to a thread lane, where a key travels with its message: \`key\` must return a value structuredClone accepts there \\(DataCloneError: `,
            ),
          ),
          cause: expect.objectContaining({ name: 'DataCloneError' }),
        });
      } finally {
        await executor.close();
      }
    },
  );

  it('moves transferred buffers both ways', async () => {
    const executor = new ThreadExecutor({ workers: 1 });
    try {
      const data = new Uint8Array(1024);
      const handle = threadHandler<{ key: string; data: Uint8Array }, { received: number; out: Uint8Array }>(
        FIXTURES,
        'bytes',
        {
          transfer: (m) => [m.data.buffer as ArrayBuffer],
        },
      );
      const [value] = await lastValueFrom(
        fromIterable([{ key: 'k', data }]).pipe(
          keyedDispatch({ executor, key: (m) => m.key, handle }),
          toArray(),
        ),
      );
      expect(data.byteLength).toBe(0); // moved to the thread, not copied
      expect(value.received).toBe(1024);
      expect(value.out[0]).toBe(7);
    } finally {
      await executor.close();
    }
  });

  it('carries `undefined` values and `undefined` errors back from a thread like any other', async () => {
    const executor = new ThreadExecutor({ workers: 2 });
    try {
      const settled: string[] = [];
      const values: unknown[] = [];
      const failure = await new Promise<{ error: unknown }>((resolve, reject) => {
        fromIterable(
          [1, 2, 3].map((n) => ({ key: 'k', n })),
          { onSettled: (m, outcome) => settled.push(`${m.n}:${outcome}`) },
        )
          .pipe(
            keyedDispatch<Msg, string, unknown>({
              executor,
              key: (m) => m.key,
              handle: threadHandler(FIXTURES, 'undefinedValues'),
            }),
          )
          .subscribe({
            next: (v) => values.push(v),
            error: (error: unknown) => resolve({ error }),
            complete: () => reject(new Error('expected message 3 to error the output')),
          });
      });
      expect(values).toEqual([undefined, 1, undefined, 2]);
      expect(failure.error).toBeUndefined();
      expect(settled).toEqual(['1:done', '2:done', '3:failed']);
    } finally {
      await executor.close();
    }
  });

  it('lets dispatchers with different handler modules share one thread set', async () => {
    const executor = new ThreadExecutor({ workers: 2 });
    try {
      const messages = (tag: string): Msg[] =>
        Array.from({ length: 50 }, (_, n) => ({ key: `${tag}${n % 4}`, n }));
      const [a, b] = await Promise.all([
        lastValueFrom(
          fromIterable(messages('a')).pipe(
            keyedDispatch<Msg, string, Ran>({
              executor,
              key: (m) => m.key,
              handle: threadHandler(FIXTURES, 'echo'),
            }),
            toArray(),
          ),
        ),
        lastValueFrom(
          fromIterable(messages('b')).pipe(
            keyedDispatch<Msg, string, Ran>({
              executor,
              key: (m) => m.key,
              handle: threadHandler(FIXTURES, 'later'),
            }),
            toArray(),
          ),
        ),
      ]);
      expect(a).toHaveLength(50);
      expect(b).toHaveLength(50);
      expect(new Set([...a, ...b].map((v) => v.thread)).size).toBe(2);
    } finally {
      await executor.close();
    }
  });

  it('runs on ThreadExecutor.shared by default, which stops its threads once no dispatcher runs on it', async () => {
    const values = await lastValueFrom(
      fromIterable<Msg>([{ key: 'k', n: 1 }]).pipe(
        keyedDispatch<Msg, string, Ran>({ key: (m) => m.key, handle: threadHandler(FIXTURES, 'echo') }),
        toArray(),
      ),
    );
    expect(values[0].thread).not.toBe(0);
    expect(ThreadExecutor.shared.liveThreads).toBe(0);
    await expect(ThreadExecutor.shared.close()).rejects.toThrow('cannot be closed');
  });

  it('terminates every thread on close', async () => {
    const executor = new ThreadExecutor({ workers: 2 });
    await lastValueFrom(
      fromIterable<Msg>([
        { key: 'a', n: 1 },
        { key: 'b', n: 1 },
      ]).pipe(
        keyedDispatch<Msg, string, Ran>({
          executor,
          key: (m) => m.key,
          handle: threadHandler(FIXTURES, 'echo'),
        }),
      ),
    );
    expect(executor.liveThreads).toBe(2);
    await executor.close();
    expect(executor.liveThreads).toBe(0);
  });

  it('errors the output, naming module and export, when the handler export is missing', async () => {
    const executor = new ThreadExecutor({ workers: 1 });
    try {
      const run = lastValueFrom(
        fromIterable<Msg>([{ key: 'a', n: 1 }]).pipe(
          keyedDispatch<Msg, string, Ran>({
            executor,
            key: (m) => m.key,
            handle: threadHandler(FIXTURES, 'nope'),
          }),
        ),
      );
      await expect(run).rejects.toThrow("lane-handlers.js has no function export 'nope'");
    } finally {
      await executor.close();
    }
  });

  it('rejects invalid options and mismatched lane kinds, naming the option and the value', () => {
    expect(() => new ThreadExecutor({ workers: 0 })).toThrow(
      'ThreadExecutor: expected `workers` to be an integer from 1 to 1024, got 0 (number)',
    );
    expect(() => new ThreadExecutor({ maxRespawnsPerMinute: -1 })).toThrow(
      '`maxRespawnsPerMinute` to be an integer >= 0, got -1 (number)',
    );
    expect(() => threadHandler('relative/path.js', 'x')).toThrow(
      "expected `module` to be a URL or an absolute path, got 'relative/path.js' (string)",
    );
    expect(() => threadHandler({ href: 'relative/path.js' }, 'x')).toThrow(
      'expected `module` to be a URL or an absolute path',
    );
    expect(threadHandler({ href: 'file:///handlers/price.mjs' }, 'x').moduleUrl).toBe(
      'file:///handlers/price.mjs',
    );
    expect(() =>
      keyedDispatch<Msg, string, Ran>({
        executor: new KeyedExecutor({ lanes: 1 }),
        key: (m) => m.key,
        handle: threadHandler(FIXTURES, 'echo'),
      }),
    ).toThrow('so `executor` must be a ThreadExecutor, got a KeyedExecutor');
    expect(() =>
      keyedDispatch<Msg, string, Ran>({
        executor: new ThreadExecutor({ workers: 1 }),
        key: (m) => m.key,
        handle: () => [],
      }),
    ).toThrow('so `handle` must be threadHandler(module, exportName), got a function');
  });
});
