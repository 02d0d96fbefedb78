import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import {
  type FailureContext,
  fromIterable,
  keyedDispatch,
  type RetryPolicyOptions,
  retryPolicy,
  ThreadExecutor,
  threadHandler,
} from 'keyed-dispatch';
import { lastValueFrom, toArray } from 'rxjs';
import { outcomeOf, within } from '../lanes/shared-state';

const RETRY_HANDLERS = join(__dirname, '..', 'fixtures', 'retry-handlers.js');

/** What `flaky` writes, in memory the threads share (see retry-handlers.js). */
class Journal {
  readonly log = new Int32Array(new SharedArrayBuffer(4 * 256));
  readonly at = new Float64Array(new SharedArrayBuffer(8 * 256));
  readonly runs = new Int32Array(new SharedArrayBuffer(4 * 64));

  /** The ids of the runs so far, in start order. */
  get order(): number[] {
    return Array.from(this.log.subarray(1, 1 + Atomics.load(this.log, 0)));
  }

  /** When each run of message `id` started, in order. */
  startsOf(id: number): number[] {
    return this.order.flatMap((runId, i) => (runId === id ? [this.at[i] as number] : []));
  }
}

interface Msg {
  key: string;
  id: number;
  journal: Journal;
  fails?: number;
  exitOn?: number;
  exitFrom?: number;
  ms?: number;
  uncloneable?: boolean;
}

interface Ran {
  key: string;
  id: number;
  run: number;
  lane: number;
  thread: number;
}

describe('retryPolicy on thread lanes', () => {
  let executor: ThreadExecutor;
  let journal: Journal;
  beforeEach(() => {
    executor = new ThreadExecutor({ workers: 1 });
    journal = new Journal();
  });
  afterEach(() => executor.close());

  const msg = (key: string, id: number, extra: Partial<Msg> = {}): Msg => ({ key, id, journal, ...extra });

  function dispatch(
    messages: Msg[],
    policy: RetryPolicyOptions<Msg, string>,
    key: (m: Msg) => string = (m) => m.key,
  ) {
    const settled: string[] = [];
    const outcome = outcomeOf(
      within(
        lastValueFrom(
          fromIterable(messages, { onSettled: (m, outcome) => settled.push(`${m.id} ${outcome}`) }).pipe(
            keyedDispatch<Msg, string, Ran>({
              executor,
              key,
              handle: threadHandler<Msg, Ran>(RETRY_HANDLERS, 'flaky'),
              failurePolicy: retryPolicy(policy),
            }),
            toArray(),
          ),
        ),
        20_000,
        'the output to end',
      ),
    );
    return { outcome, settled };
  }

  it('runs a failed message again in its thread after the backoff, and emits what the run that succeeds emits', async () => {
    const { outcome, settled } = dispatch([msg('a', 0, { fails: 2 })], {
      maxAttempts: 3,
      backoff: { initialMs: 100, factor: 1, jitter: 0 },
    });
    expect(await outcome).toEqual({ value: [expect.objectContaining({ key: 'a', id: 0, run: 3 })] });
    expect(settled).toEqual(['0 done']);
    const [first, second, third] = journal.startsOf(0) as [number, number, number];
    expect(second - first).toBeGreaterThanOrEqual(95);
    expect(third - second).toBeGreaterThanOrEqual(95);
  });

  it("holds only its key while it waits out the backoff: the key's next message waits, other keys on its thread go on", async () => {
    const { outcome, settled } = dispatch(
      [msg('a', 0, { fails: 1 }), msg('a', 1), msg('b', 2), msg('b', 3)],
      { maxAttempts: 2, backoff: { initialMs: 300, jitter: 0 } },
    );
    const values = (await outcome) as { value: Ran[] };
    // One thread: b's messages ran during a0's backoff; a1 only once a0's retry succeeded.
    expect(journal.order).toEqual([0, 2, 3, 0, 1]);
    expect(values.value.map((v) => `${v.id}@${v.run}`)).toEqual(['2@1', '3@1', '0@2', '1@1']);
    expect(journal.startsOf(1)[0]).toBeGreaterThan(journal.startsOf(0)[1] as number);
    expect(settled).toEqual(['2 done', '3 done', '0 done', '1 done']);
  });

  it("runs the dead letter on the main thread once the attempts are spent, before its key's next message starts", async () => {
    const dead: Array<{ id: number; error: string; context: FailureContext<string>; mainThread: boolean }> =
      [];
    let deadLetterDoneAt = 0;
    const { outcome, settled } = dispatch([msg('a', 0, { fails: 9 }), msg('a', 1)], {
      maxAttempts: 2,
      backoff: { initialMs: 10, jitter: 0 },
      deadLetter: async (m, error, context) => {
        dead.push({ id: m.id, error: String(error), context, mainThread: isMainThread });
        await new Promise((resolve) => setTimeout(resolve, 100));
        deadLetterDoneAt = performance.timeOrigin + performance.now();
      },
    });
    expect(await outcome).toEqual({ value: [expect.objectContaining({ id: 1, run: 1 })] });
    expect(dead).toEqual([
      {
        id: 0,
        error: 'Error: run 2 of message 0 failed',
        context: { key: 'a', attempts: 2, laneIndex: 0 },
        mainThread: true,
      },
    ]);
    expect(journal.order).toEqual([0, 0, 1]);
    expect(journal.startsOf(1)[0]).toBeGreaterThanOrEqual(deadLetterDoneAt);
    expect(settled).toEqual(['0 dead-lettered', '1 done']);
  });

  it('sends an error the policy does not retry to the dead letter at once', async () => {
    const dead: number[] = [];
    const { outcome, settled } = dispatch([msg('a', 0, { fails: 1 }), msg('a', 1)], {
      maxAttempts: 5,
      retryable: () => false,
      deadLetter: (m) => void dead.push(m.id),
    });
    expect(await outcome).toEqual({ value: [expect.objectContaining({ id: 1 })] });
    expect(dead).toEqual([0]);
    expect(journal.order).toEqual([0, 1]);
    expect(settled).toEqual(['0 dead-lettered', '1 done']);
  });

  it('errors the output with a TypeError naming `retryable` when it returns something other than a boolean', async () => {
    const { outcome } = dispatch([msg('a', 0, { fails: 1 }), msg('a', 1)], {
      retryable: (() => 'yes') as never,
    });
    expect(await outcome).toEqual({
      error: new TypeError(
        "retryPolicy: `retryable` returned 'yes' (string) for key a; expected a boolean (it is asked synchronously: an async function returns a Promise)",
      ),
    });
  });

  it('replaces a thread that dies during a retry and runs that retry again there; the crash costs no attempt', async () => {
    const threadBefore = executor.threadIds;
    const { outcome, settled } = dispatch([msg('a', 0, { fails: 1, exitOn: 2 }), msg('a', 1), msg('b', 2)], {
      maxAttempts: 2,
      backoff: { initialMs: 50, jitter: 0 },
    });
    const values = (await outcome) as { value: Ran[] };
    expect(threadBefore).toEqual([null]);
    // Run 1 failed, run 2 (the retry) took its thread down, run 3 (the retry again) succeeded.
    expect(journal.runs[0]).toBe(3);
    expect(values.value.map((v) => `${v.id}@${v.run}`)).toEqual(['2@1', '0@3', '1@1']);
    const [ranOn0, ranOn1] = [values.value[1] as Ran, values.value[2] as Ran];
    expect(ranOn0.thread).toBe(ranOn1.thread);
    expect(ranOn0.thread).not.toBe((values.value[0] as Ran).thread);
    expect(settled).toEqual(['2 done', '0 done', '1 done']);
  });

  it('holds a message again on the thread that replaces one that died while it waited out its backoff', async () => {
    const { outcome, settled } = dispatch(
      // b2 takes the thread down 150 ms in, while a0 waits out its 400 ms backoff.
      [msg('a', 0, { fails: 1 }), msg('a', 1), msg('b', 2, { exitOn: 1, ms: 150 })],
      { maxAttempts: 2, backoff: { initialMs: 400, jitter: 0 } },
    );
    const values = (await outcome) as { value: Ran[] };
    // a0 is not run again by the new thread: it waits there, held, for its retry; a1 waits behind it.
    expect(journal.runs[0]).toBe(2);
    expect(journal.order).toEqual([0, 2, 2, 0, 1]);
    const ran = values.value.map((v) => `${v.id}@${v.run}`);
    expect(ran.filter((r) => r !== '2@2')).toEqual(['0@2', '1@1']);
    expect(ran).toContain('2@2');
    expect(settled.filter((s) => s !== '2 done')).toEqual(['0 done', '1 done']);
  });

  it('sends only the message that keeps crashing its thread to the dead letter; a held message of another key on that thread is retried and done', async () => {
    const dead: Array<[number, string]> = [];
    const { outcome, settled } = dispatch(
      // b1 takes the thread down on every run while a0 waits out its backoff, held on that thread.
      [msg('a', 0, { fails: 1 }), msg('b', 1, { exitFrom: 1, ms: 50 })],
      {
        maxAttempts: 2,
        backoff: { initialMs: 200, jitter: 0 },
        deadLetter: (m, error) => void dead.push([m.id, (error as Error).name]),
      },
    );
    expect(await outcome).toEqual({ value: [expect.objectContaining({ id: 0, run: 2 })] });
    expect(dead).toEqual([[1, 'ThreadCrashLoopError']]);
    // b1: its first run (a suspect), alone on the replacement (blamed: attempt 1), its retry (attempt 2).
    expect(journal.runs[1]).toBe(3);
    expect(journal.runs[0]).toBe(2);
    expect([...settled].sort()).toEqual(['0 done', '1 dead-lettered']);
  });

  it('sends a message whose value cannot cross to the main thread to the dead letter without running it again (its thread completed it), and goes on', async () => {
    const dead: Array<[number, string]> = [];
    const { outcome, settled } = dispatch([msg('a', 0, { uncloneable: true }), msg('a', 1), msg('b', 2)], {
      maxAttempts: 3,
      backoff: { initialMs: 20, jitter: 0 },
      deadLetter: (m, error) => void dead.push([m.id, String(error)]),
    });
    expect(await outcome).toEqual({
      value: expect.arrayContaining([expect.objectContaining({ id: 1 }), expect.objectContaining({ id: 2 })]),
    });
    expect(dead).toEqual([[0, expect.stringContaining('cannot be cloned')]]);
    expect(journal.runs[0]).toBe(1);
    expect(journal.order.filter((id) => id !== 2)).toEqual([0, 1]);
    expect([...settled].sort()).toEqual(['0 dead-lettered', '1 done', '2 done']);
  });

  it('sends the messages of a handler module that cannot load to the dead letter once their attempts, each failing with the load error, are spent', async () => {
    const settled: string[] = [];
    const dead: Array<[number, string, number]> = [];
    const outcome = await outcomeOf(
      within(
        lastValueFrom(
          fromIterable([msg('a', 0), msg('a', 1), msg('b', 2)], {
            onSettled: (m, outcome) => settled.push(`${m.id} ${outcome}`),
          }).pipe(
            keyedDispatch<Msg, string, Ran>({
              executor,
              key: (m) => m.key,
              handle: threadHandler<Msg, Ran>(RETRY_HANDLERS, 'nope'),
              failurePolicy: retryPolicy({
                maxAttempts: 2,
                backoff: { initialMs: 10, jitter: 0 },
                deadLetter: (m, error, context) => void dead.push([m.id, String(error), context.attempts]),
              }),
            }),
            toArray(),
          ),
        ),
        10_000,
        'the output to end',
      ),
    );
    expect(outcome).toEqual({ value: [] });
    const loadError = expect.stringContaining("retry-handlers.js has no function export 'nope'");
    expect(dead.sort()).toEqual([
      [0, loadError, 2],
      [1, loadError, 2],
      [2, loadError, 2],
    ]);
    expect(journal.order).toEqual([]);
    expect([...settled].sort()).toEqual(['0 dead-lettered', '1 dead-lettered', '2 dead-lettered']);
  });

  it('sends a message whose key selector failed to the dead letter on the main thread, no thread running it', async () => {
    const dead: Array<[number, FailureContext<string>]> = [];
    const { outcome, settled } = dispatch(
      [msg('a', 0), msg('a', 1)],
      { deadLetter: (m, _error, context) => void dead.push([m.id, context]) },
      (m) => {
        if (m.id === 0) throw new Error('no key');
        return m.key;
      },
    );
    expect(await outcome).toEqual({ value: [expect.objectContaining({ id: 1 })] });
    expect(dead).toEqual([[0, { key: undefined, attempts: 1, laneIndex: -1 }]]);
    expect(journal.order).toEqual([1]);
    expect(settled).toEqual(['0 dead-lettered', '1 done']);
  });
});
