import {
  fromIterable,
  type KeyedBatchDispatchOptions,
  KeyedExecutor,
  keyedBatchDispatch,
  retryPolicy,
  ThreadExecutor,
  threadHandler,
} from 'keyed-dispatch';
import { lastValueFrom, mergeMap, Observable, throwError, timer, toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { outcomeOf, within } from '../lanes/shared-state';
import { sleep, waitFor } from '../support/waits';
import {
  BATCH_HANDLERS,
  batchLaneKinds,
  type Item,
  items,
  Journal,
  onOneLane,
  type Stored,
  settlementLog,
} from './journal';
import { type ListSession, listReceiver } from './list-receiver';

type Options = KeyedBatchDispatchOptions<Item, string, Stored>;

describe.each(batchLaneKinds)('keyedBatchDispatch at the edges on %s', (_name, kind) => {
  const lane = onOneLane(kind);

  function dispatch(
    source: Observable<Item>,
    handler: Parameters<typeof kind.handler>[0],
    extra: Partial<Options> = {},
  ): Observable<Stored> {
    return source.pipe(
      keyedBatchDispatch<Item, string, Stored>({
        executor: lane.executor,
        key: (m) => m.key,
        handle: kind.handler(handler),
        ...extra,
      }),
    );
  }

  const outcome = (output: Observable<Stored>) =>
    outcomeOf(within(lastValueFrom(output.pipe(toArray())), 20_000, 'the output to end'));

  it('errors the output for a batch whose handler emits, then errors, without a policy; no message of it is settled done', async () => {
    const { journal } = lane;
    const { log, onSettled } = settlementLog();
    const messages = [...items(journal, 'a', 0, 2), { key: 'a', id: 2, journal, poison: true }];
    const emitted: Stored[] = [];
    const result = await outcomeOf(
      within(
        new Promise<void>((resolve, reject) =>
          dispatch(fromIterable(messages, { onSettled }), 'emitThenFail').subscribe({
            next: (value) => emitted.push(value),
            error: reject,
            complete: resolve,
          }),
        ),
        20_000,
        'the output to end',
      ),
    );
    expect(result).toEqual({ error: new Error('poison message 2') });
    expect(emitted.map((v) => v.ids)).toEqual([[0, 1, 2]]);
    expect(log).toEqual(['0 failed']);
  });

  it('emits what each attempt of a batch emits before failing, under a policy, and settles each message once its fate is known', async () => {
    const { journal } = lane;
    const { log, onSettled } = settlementLog();
    const dead: number[] = [];
    const messages = [...items(journal, 'a', 0, 2), { key: 'a', id: 2, journal, poison: true }];
    const result = await outcome(
      dispatch(fromIterable(messages, { onSettled }), 'emitThenFail', {
        failurePolicy: retryPolicy({
          maxAttempts: 2,
          backoff: { initialMs: 1, jitter: 0 },
          deadLetter: (m) => void dead.push(m.id),
        }),
      }),
    );
    expect((result as { value: Stored[] }).value.map((v) => v.ids)).toEqual([
      [0, 1, 2],
      [0, 1, 2],
      [0],
      [1],
      [2],
      [2],
    ]);
    expect(dead).toEqual([2]);
    expect(log).toEqual(['0 done', '1 done', '2 dead-lettered']);
  });

  it('errors the output, naming the key, for a batch handler that returns nothing; no message of it is settled done', async () => {
    const { journal } = lane;
    const { log, onSettled } = settlementLog();
    const result = await outcome(dispatch(fromIterable(items(journal, 'a', 0, 3), { onSettled }), 'nothing'));
    expect(String((result as { error: unknown }).error)).toMatch(
      /^TypeError: .*returned undefined for key a/,
    );
    expect(log).toEqual(['0 failed']);
  });

  it('treats a batch handler that returns nothing as a failure under a policy: each message goes to the dead letter', async () => {
    const { journal } = lane;
    const { log, onSettled } = settlementLog();
    const dead: number[] = [];
    const result = await outcome(
      dispatch(fromIterable(items(journal, 'a', 0, 3), { onSettled }), 'nothing', {
        failurePolicy: retryPolicy({ maxAttempts: 1, deadLetter: (m) => void dead.push(m.id) }),
      }),
    );
    expect(result).toEqual({ value: [] });
    expect(dead).toEqual([0, 1, 2]);
    expect(log).toEqual(['0 dead-lettered', '1 dead-lettered', '2 dead-lettered']);
  });

  it('runs batches larger than throughput, in order, each key taking turns', async () => {
    const { journal } = lane;
    const { log, onSettled } = settlementLog();
    const messages = [...items(journal, 'a', 0, 20), ...items(journal, 'b', 20, 20)];
    const result = await outcome(
      dispatch(fromIterable(messages, { onSettled }), 'store', { throughput: 2, maxBatch: 8 }),
    );
    expect(result).toEqual({ value: expect.any(Array) });
    expect(log).toHaveLength(40);
    expect(log.every((l) => l.endsWith(' done'))).toBe(true);
    const batches = journal.ids();
    for (const key of ['a', 'b']) {
      const ids = messages.filter((m) => m.key === key).map((m) => m.id);
      expect(batches.flat().filter((id) => ids.includes(id))).toEqual(ids);
    }
    expect(Math.max(...batches.map((b) => b.length))).toBe(8);
  });

  it('runs nothing more and settles nothing once unsubscribed while a failed batch waits out its backoff', async () => {
    const { journal } = lane;
    const settled: string[] = [];
    const messages = [...items(journal, 'a', 0, 2), { key: 'a', id: 2, journal, poison: true }];
    const subscription = dispatch(listReceiver(messages, settled), 'store', {
      failurePolicy: retryPolicy({ maxAttempts: 3, backoff: { initialMs: 200, jitter: 0 } }),
    }).subscribe({ error: () => undefined });
    await waitFor(() => journal.ids().length === 1, 5000, 'the first run');
    await sleep(50);
    subscription.unsubscribe();
    await sleep(400);
    expect(journal.ids()).toHaveLength(1);
    expect(settled).toEqual([]);
  });

  it('runs nothing more and settles nothing once unsubscribed while a batch is taken apart', async () => {
    const { journal } = lane;
    const settled: string[] = [];
    const messages = items(journal, 'a', 0, 4, { ms: 100 }).map((m) =>
      m.id === 1 ? { ...m, poison: true } : m,
    );
    const subscription = dispatch(listReceiver(messages, settled), 'store', {
      failurePolicy: retryPolicy({ maxAttempts: 1 }),
    }).subscribe({ error: () => undefined });
    await waitFor(() => journal.ids().length === 2, 5000, 'the batch to be taken apart');
    subscription.unsubscribe();
    await sleep(500);
    expect(journal.ids()).toEqual([[0, 1, 2, 3], [0]]);
    expect(settled).toEqual([]);
  });

  it('cancels the dead letter of a message of a batch taken apart when unsubscribed, and settles nothing', async () => {
    const { journal } = lane;
    const settled: string[] = [];
    let deadLetterRunning = false;
    let deadLetterCancelled = false;
    const messages = items(journal, 'a', 0, 3).map((m) => (m.id === 1 ? { ...m, poison: true } : m));
    const subscription = dispatch(listReceiver(messages, settled), 'store', {
      failurePolicy: retryPolicy({
        maxAttempts: 1,
        deadLetter: () =>
          new Observable<never>(() => {
            deadLetterRunning = true;
            return () => {
              deadLetterCancelled = true;
            };
          }),
      }),
    }).subscribe({ error: () => undefined });
    await waitFor(() => deadLetterRunning, 5000, 'the dead letter to start');
    subscription.unsubscribe();
    await sleep(100);
    expect(deadLetterCancelled).toBe(true);
    expect(journal.ids()).toEqual([[0, 1, 2], [0], [1]]);
    expect(settled).toEqual([]);
  });

  it('keeps a failed batch waiting out its backoff when its receiver takes back what has not started: only the next batch goes back', async () => {
    const { journal } = lane;
    const settled: string[] = [];
    let session: ListSession | undefined;
    const messages = items(journal, 'a', 0, 3).map((m) => (m.id === 1 ? { ...m, failRuns: 1 } : m));
    const done = outcome(
      dispatch(listReceiver(messages, settled, { available: 0, opened: (s) => (session = s) }), 'store', {
        failurePolicy: retryPolicy({ maxAttempts: 3, backoff: { initialMs: 300, jitter: 0 } }),
      }),
    );
    (session as ListSession).deliverUpTo(2);
    await waitFor(() => journal.ids().length === 1, 5000, 'the first run');
    (session as ListSession).deliverUpTo(3);
    await sleep(20);
    expect((session as ListSession).takeBack(() => true)).toEqual([2]);
    expect(await done).toEqual({ value: [expect.objectContaining({ ids: [0, 1] })] });
    expect(journal.ids()).toEqual([
      [0, 1],
      [0, 1],
    ]);
    expect(settled).toEqual(['0 done', '1 done']);
  });

  if (kind.threads) {
    it('runs a batch again, whole, on the thread that replaces one that died running it, without a policy', async () => {
      const { journal } = lane;
      const { log, onSettled } = settlementLog();
      const messages = items(journal, 'a', 0, 3, { ms: 20 }).map((m) =>
        m.id === 1 ? { ...m, exitOn: 1 } : m,
      );
      const result = await outcome(dispatch(fromIterable(messages, { onSettled }), 'emitThenFail'));
      expect(result).toEqual({ value: expect.any(Array) });
      expect(journal.ids()).toEqual([
        [0, 1, 2],
        [0, 1, 2],
      ]);
      expect(log).toEqual(['0 done', '1 done', '2 done']);
    });

    it('runs a batch again on the thread that replaces one that died running it, under a policy; the crash costs no attempt', async () => {
      const { journal } = lane;
      const { log, onSettled } = settlementLog();
      const messages = items(journal, 'a', 0, 3, { ms: 20 }).map((m) =>
        m.id === 1 ? { ...m, exitOn: 1 } : m,
      );
      const result = await outcome(
        dispatch(fromIterable(messages, { onSettled }), 'emitThenFail', {
          failurePolicy: retryPolicy({ maxAttempts: 1 }),
        }),
      );
      expect(result).toEqual({ value: expect.any(Array) });
      expect(journal.ids()).toEqual([
        [0, 1, 2],
        [0, 1, 2],
      ]);
      expect(log).toEqual(['0 done', '1 done', '2 done']);
    });

    it('stops a run whose value could not cross to the main thread before its retry starts: never two runs of a key at once', async () => {
      const { journal } = lane;
      const { log, onSettled } = settlementLog();
      const dead: number[] = [];
      // Each run's value fails it at once on the main thread, while the run goes on for 300 ms.
      const result = await outcome(
        dispatch(fromIterable(items(journal, 'a', 0, 2, { ms: 300 }), { onSettled }), 'uncloneableThenWait', {
          failurePolicy: retryPolicy({
            maxAttempts: 3,
            backoff: { initialMs: 30, jitter: 0 },
            deadLetter: (m) => void dead.push(m.id),
          }),
        }),
      );
      const { ACTIVE, OVERLAP } = require(BATCH_HANDLERS);
      expect(result).toEqual({ value: [] });
      expect(journal.runs[OVERLAP]).toBe(0);
      // The last run is stopped once its thread hears the message was dealt with.
      await waitFor(() => journal.runs[ACTIVE] === 0, 5000, 'the last run to stop');
      expect(journal.ids()).toEqual([[0, 1], [0, 1], [0, 1], [0], [0], [0], [1], [1], [1]]);
      expect(dead).toEqual([0, 1]);
      expect(log).toEqual(['0 dead-lettered', '1 dead-lettered']);
    });

    it("runs a batch's retry again on the thread that replaces one that died running it; the crash costs no attempt", async () => {
      const { journal } = lane;
      const { log, onSettled } = settlementLog();
      // 0 fails the first run; 1 takes its thread down on its second run, the retry.
      const messages = items(journal, 'a', 0, 3, { ms: 20 }).map((m) =>
        m.id === 0 ? { ...m, failRuns: 1 } : m.id === 1 ? { ...m, exitOn: 2 } : m,
      );
      const result = await outcome(
        dispatch(fromIterable(messages, { onSettled }), 'emitThenFail', {
          failurePolicy: retryPolicy({ maxAttempts: 2, backoff: { initialMs: 1, jitter: 0 } }),
        }),
      );
      expect(result).toEqual({ value: expect.any(Array) });
      expect(journal.ids()).toEqual([
        [0, 1, 2],
        [0, 1, 2],
        [0, 1, 2],
      ]);
      expect(log).toEqual(['0 done', '1 done', '2 done']);
    });

    it('runs again the message of a batch taken apart whose thread died running it, on its replacement, and goes on in order', async () => {
      const { journal } = lane;
      const { log, onSettled } = settlementLog();
      // 1 fails the batch; 2 takes its thread down on its second run, its first one alone.
      const messages = items(journal, 'a', 0, 4, { ms: 20 }).map((m) =>
        m.id === 1 ? { ...m, poison: true } : m.id === 2 ? { ...m, exitOn: 2 } : m,
      );
      const dead: number[] = [];
      const result = await outcome(
        dispatch(fromIterable(messages, { onSettled }), 'emitThenFail', {
          failurePolicy: retryPolicy({ maxAttempts: 1, deadLetter: (m) => void dead.push(m.id) }),
        }),
      );
      expect(result).toEqual({ value: expect.any(Array) });
      expect(journal.ids()).toEqual([[0, 1, 2, 3], [0], [1], [2], [2], [3]]);
      expect(dead).toEqual([1]);
      expect(log).toEqual(['0 done', '1 dead-lettered', '2 done', '3 done']);
    });
  }
});

describe('keyedBatchDispatch on a thread lane whose thread one message keeps crashing', () => {
  it('sends only that message to the dead letter, after the attempts of the batch and of each message; the others of its batch are done', async () => {
    const executor = new ThreadExecutor({ workers: 1 });
    try {
      const journal = new Journal();
      const { log, onSettled } = settlementLog();
      const dead: Array<[number, string]> = [];
      const messages = items(journal, 'a', 0, 3, { ms: 20 }).map((m) =>
        m.id === 1 ? { ...m, exitFrom: 1 } : m,
      );
      const result = await outcomeOf(
        within(
          lastValueFrom(
            fromIterable(messages, { onSettled }).pipe(
              keyedBatchDispatch<Item, string, Stored>({
                executor,
                key: (m) => m.key,
                handle: threadHandler<Item[], Stored>(BATCH_HANDLERS, 'emitThenFail'),
                failurePolicy: retryPolicy({
                  maxAttempts: 2,
                  backoff: { initialMs: 1, jitter: 0 },
                  deadLetter: (m, error) => void dead.push([m.id, (error as Error).name]),
                }),
              }),
              toArray(),
            ),
          ),
          20_000,
          'the output to end',
        ),
      );
      expect(result).toEqual({ value: expect.any(Array) });
      expect(dead).toEqual([[1, 'ThreadCrashLoopError']]);
      // The batch: its run (a suspect), alone (blamed), its retry; then each message alone, 1 twice.
      expect(journal.ids()).toEqual([[0, 1, 2], [0, 1, 2], [0, 1, 2], [0], [1], [1], [2]]);
      expect(log).toEqual(['0 done', '1 dead-lettered', '2 done']);
    } finally {
      await executor.close();
    }
  });
});

describe('keyedBatchDispatch with a policy in virtual time', () => {
  it('retries a failed batch after its backoff, then takes it apart, each message on its own attempts', () => {
    new TestScheduler((actual, expected) => expect(actual).toEqual(expected)).run(
      ({ cold, expectObservable }) => {
        const dead: string[] = [];
        const out = cold('(abc)|').pipe(
          keyedBatchDispatch({
            executor: new KeyedExecutor({ lanes: 1 }),
            key: () => 'k',
            // Each call takes 2 frames; any batch holding b fails.
            handle: (batch: string[], context) =>
              timer(2, context.scheduler).pipe(
                mergeMap(() => (batch.includes('b') ? throwError(() => new Error('b')) : [batch.join('')])),
              ),
            failurePolicy: retryPolicy<string, string>({
              maxAttempts: 2,
              backoff: { initialMs: 5, jitter: 0 },
              deadLetter: (m) => void dead.push(m),
            }),
          }),
        );
        // abc fails at 2 and, after 5, at 9; then a alone ends at 11, b fails at 13 and 20, c ends at 22.
        expectObservable(out).toBe('11ms x 10ms (y|)', { x: 'a', y: 'c' });
      },
    );
  });
});
