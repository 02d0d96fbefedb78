import {
  fromIterable,
  keyedDispatch,
  LocalBus,
  type Settlement,
  ThreadExecutor,
  type ThreadHandler,
  threadHandler,
} from 'keyed-dispatch';
import { lastValueFrom, type Observable, toArray } from 'rxjs';
import { sleep } from '../support/waits';
import { FIXTURES, type Msg, type Ran } from './lane-kinds';
import { outcomeOf, sharedInts, within } from './shared-state';

/** Message 1 (key `bad`) is the one that cannot cross; the others are plain, on keys of their own and `a`'s. */
const BAD = 1;

function scenario(bad: Partial<Msg>) {
  // By message number: how many times its handler ran.
  const runs = sharedInts(5);
  const messages: Msg[] = [
    { key: 'a', n: 0, runs },
    { key: 'bad', n: BAD, runs, ...bad },
    { key: 'b', n: 2, runs },
    { key: 'a', n: 3, runs },
    { key: 'c', n: 4, runs },
  ];
  const settled: Array<[number, Settlement]> = [];
  const onSettled = (m: Msg, outcome: Settlement) => settled.push([m.n, outcome]);
  return { runs, messages, settled, onSettled };
}

/** The values and the error of `output`, bounded in time. */
async function ending(output: Observable<Ran>): Promise<{ values: Ran[]; error?: unknown }> {
  const values: Ran[] = [];
  const done = new Promise<{ values: Ran[]; error?: unknown }>((resolve) => {
    output.subscribe({
      next: (v) => values.push(v),
      error: (error: unknown) => resolve({ values, error }),
      complete: () => resolve({ values }),
    });
  });
  return within(done, 10_000, 'the output to error or complete');
}

/** A following pipeline on the same executor: it must still run, on the same thread. */
async function stillWorks(executor: ThreadExecutor): Promise<void> {
  const values = await within(
    lastValueFrom(
      fromIterable<Msg>([0, 1, 2].map((n) => ({ key: `after${n}`, n }))).pipe(
        keyedDispatch<Msg, string, Ran>({
          executor,
          key: (m) => m.key,
          handle: threadHandler(FIXTURES, 'echo'),
        }),
        toArray(),
      ),
    ),
    10_000,
    'a following pipeline to complete',
  );
  expect(values.map((v) => v.n).sort()).toEqual([0, 1, 2]);
}

/** Starts the executor's thread with a first pipeline, so its thread id can be compared afterwards. */
async function warmedUp(): Promise<{ executor: ThreadExecutor; threadIds: ReadonlyArray<number | null> }> {
  const executor = new ThreadExecutor({ workers: 1 });
  await stillWorks(executor);
  return { executor, threadIds: executor.threadIds };
}

/**
 * What every case requires: only the bad message failed; no message settled `done` without having
 * run; none ran twice; the thread was not replaced; the executor still runs a following pipeline.
 */
async function expectOnlyTheBadMessageFailed(
  executor: ThreadExecutor,
  threadIds: ReadonlyArray<number | null>,
  { runs, settled }: ReturnType<typeof scenario>,
  ran: (n: number) => boolean,
): Promise<void> {
  // Whatever a replacement thread would run again has time to.
  await sleep(300);
  expect(settled.filter(([, outcome]) => outcome === 'failed')).toEqual([[BAD, 'failed']]);
  for (const [n, outcome] of settled) if (outcome === 'done') expect([n, ran(n)]).toEqual([n, true]);
  expect(Array.from(runs).filter((count) => count > 1)).toEqual([]);
  expect(executor.threadIds).toEqual(threadIds);
  await stillWorks(executor);
}

describe('thread lanes, with a value that cannot cross the thread boundary', () => {
  describe.each([
    ['a function', 'function', /notCloneable/],
    ['a null-prototype object holding a function', 'null-prototype', /notCloneable/],
    ['a value whose transfer list names one buffer twice', 'transfer-twice', /twice/],
  ])('when a handler emits %s', (_what, emit, says) => {
    it('fails its own message only, with an error saying what could not be cloned, and keeps the thread', async () => {
      const { executor, threadIds } = await warmedUp();
      try {
        const run = scenario({ emit });
        const { error } = await ending(
          fromIterable(run.messages, { onSettled: run.onSettled }).pipe(
            keyedDispatch<Msg, string, Ran>({
              executor,
              key: (m) => m.key,
              handle: threadHandler(FIXTURES, 'uncloneable'),
            }),
          ),
        );
        // Cloned from the thread into the main realm, not the test's: checked by shape, not by instanceof.
        expect(error).toMatchObject({ name: expect.stringMatching(/Error$/) });
        expect((error as Error).message).toMatch(says);
        await expectOnlyTheBadMessageFailed(executor, threadIds, run, (n) => Atomics.load(run.runs, n) === 1);
      } finally {
        await executor.close();
      }
    });
  });

  describe('when the `transfer` option of threadHandler throws for a message', () => {
    const listingThrows: ThreadHandler<Msg, Ran> = threadHandler<Msg, Ran>(FIXTURES, 'uncloneable', {
      transfer: (m) => {
        if (m.n === BAD) throw new Error(`cannot list the buffers of message ${m.n}`);
        return [];
      },
    });

    it('fails that message only, with the error it threw, and keeps the thread', async () => {
      const { executor, threadIds } = await warmedUp();
      try {
        const run = scenario({});
        const { error } = await ending(
          fromIterable(run.messages, { onSettled: run.onSettled }).pipe(
            keyedDispatch<Msg, string, Ran>({ executor, key: (m) => m.key, handle: listingThrows }),
          ),
        );
        expect(error).toEqual(new Error('cannot list the buffers of message 1'));
        // The bad message was never posted, so it never ran.
        expect(Atomics.load(run.runs, BAD)).toBe(0);
        await expectOnlyTheBadMessageFailed(executor, threadIds, run, (n) => Atomics.load(run.runs, n) === 1);
      } finally {
        await executor.close();
      }
    });

    it("from a LocalBus with failurePolicy 'error', `send` does not throw, and the output errors with the error it threw", async () => {
      const { executor, threadIds } = await warmedUp();
      const bus = new LocalBus<Msg>();
      try {
        const run = scenario({});
        const ended = ending(
          bus.receive({ onSettled: run.onSettled }).pipe(
            keyedDispatch<Msg, string, Ran>({
              executor,
              key: (m) => m.key,
              handle: listingThrows,
              failurePolicy: 'error',
            }),
          ),
        );
        const sends: Array<Promise<unknown>> = [];
        for (const m of run.messages) {
          expect(() => sends.push(outcomeOf(bus.send(m)))).not.toThrow();
        }
        bus.close();
        const { error } = await ended;
        await within(Promise.all(sends), 10_000, 'every send to settle');
        expect(error).toEqual(new Error('cannot list the buffers of message 1'));
        expect(Atomics.load(run.runs, BAD)).toBe(0);
        await expectOnlyTheBadMessageFailed(executor, threadIds, run, (n) => Atomics.load(run.runs, n) === 1);
      } finally {
        bus.close();
        await executor.close();
      }
    });
  });
});

describe('thread lanes, when a thread dies holding a moved message and a copied one of the same dispatcher', () => {
  it('fails the dispatcher with ThreadCrashLoopError and never starts the copied one after it ended', async () => {
    const executor = new ThreadExecutor({ workers: 1 });
    try {
      const starts = sharedInts(2);
      const crashes = sharedInts(1);
      const data = new Uint8Array(8);
      // Message 0 moves a buffer and kills its thread; message 1, copied, waits behind it in its key (of
      // another key it could start first, while message 0's data is on its way).
      const messages: Msg[] = [
        { key: 'a', n: 0, starts, crashes, crash: 'exit', data },
        { key: 'a', n: 1, starts, crashes },
      ];
      const handle = threadHandler<Msg, Ran>(FIXTURES, 'countedCrashing', {
        // Nothing listed for a message without data: it is copied, and a new thread could run it again.
        transfer: (m) =>
          m.data instanceof Uint8Array ? [m.data.buffer as ArrayBuffer] : (undefined as never),
      });
      const { error } = await ending(
        fromIterable(messages).pipe(keyedDispatch<Msg, string, Ran>({ executor, key: (m) => m.key, handle })),
      );
      // The only message running, its data gone with the thread: it is blamed at once.
      expect(error).toMatchObject({ name: 'ThreadCrashLoopError' });
      await sleep(300);
      // Message 1 was withdrawn with its dispatcher: it never ran on the replacement thread.
      expect(Atomics.load(starts, 1)).toBe(0);
    } finally {
      await executor.close();
    }
  });
});
