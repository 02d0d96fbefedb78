import { DispatchStats, fromIterable, KeyedExecutor, keyedBatchDispatch } from 'keyed-dispatch';
import { lastValueFrom, map, type Observable, Subject, timer, toArray } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { within } from '../lanes/shared-state';
import { waitFor } from '../support/waits';
import { batchLaneKinds, type Item, items, onOneLane, type Stored, settlementLog } from './journal';

describe.each(batchLaneKinds)('keyedBatchDispatch on %s', (_name, kind) => {
  const lane = onOneLane(kind);

  function dispatch(
    source: Observable<Item>,
    options: { maxBatch?: number; maxInFlight?: number; maxPerKey?: number; throughput?: number } = {},
    handler: 'store' | 'storeNow' = 'store',
    stats?: DispatchStats,
  ): Promise<Stored[]> {
    return within(
      lastValueFrom(
        source.pipe(
          keyedBatchDispatch<Item, string, Stored>({
            executor: lane.executor,
            key: (m) => m.key,
            handle: kind.handler(handler),
            stats,
            ...options,
          }),
          toArray(),
        ),
      ),
      10_000,
      'the output to complete',
    );
  }

  it('gives the handler the messages of one key that arrived together as one batch, in receive order, and emits its values', async () => {
    const { journal } = lane;
    // a0 b1 c2 a3 b4 c5 ...: keys interleaved in one delivery.
    const messages = Array.from(
      { length: 15 },
      (_, id): Item => ({ key: 'abc'[id % 3] as string, id, journal }),
    );
    const values = await dispatch(fromIterable(messages));
    const byKey = (key: string) => messages.filter((m) => m.key === key).map((m) => m.id);
    expect(journal.ids().sort((x, y) => (x[0] as number) - (y[0] as number))).toEqual([
      byKey('a'),
      byKey('b'),
      byKey('c'),
    ]);
    expect(values.map((v) => [v.key, v.ids])).toEqual(
      expect.arrayContaining([
        ['a', byKey('a')],
        ['b', byKey('b')],
        ['c', byKey('c')],
      ]),
    );
    expect(values).toHaveLength(3);
  });

  it('puts at most maxBatch messages in a batch; the next batch of the key takes the ones that follow', async () => {
    const { journal } = lane;
    await dispatch(fromIterable(items(journal, 'a', 0, 10)), { maxBatch: 4 });
    expect(journal.ids()).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
      [8, 9],
    ]);
  });

  it("starts a key's next batch only once its previous batch completed, with the messages that arrived meanwhile; a batch never waits to fill", async () => {
    const { journal } = lane;
    const source = new Subject<Item>();
    const done = dispatch(source);
    source.next({ key: 'a', id: 0, journal, gate: true });
    // A lone message starts at once: nothing waits for a batch to fill.
    await waitFor(() => journal.ids().length === 1, 5000, 'the first batch to start');
    for (const m of items(journal, 'a', 1, 3)) source.next(m);
    source.next({ key: 'b', id: 4, journal });
    // Another key's batch runs while the first one is held...
    await waitFor(() => journal.ids().length === 2, 5000, "key b's batch to start");
    expect(journal.ids()).toEqual([[0], [4]]);
    // ...and key a's next batch waits for its previous one.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(journal.ids()).toHaveLength(2);
    journal.open();
    source.complete();
    await done;
    const batches = journal.batches();
    expect(batches.map((b) => b.ids)).toEqual([[0], [4], [1, 2, 3]]);
    expect(batches[2]?.start).toBeGreaterThanOrEqual(batches[0]?.end as number);
  });

  it("counts every message of a batch in the window and in its key's share", async () => {
    const { journal } = lane;
    const stats = new DispatchStats();
    const messages = [
      ...items(journal, 'a', 0, 10, { gate: true }),
      ...items(journal, 'b', 10, 2, { gate: true }),
    ];
    const done = dispatch(
      fromIterable(messages),
      { maxInFlight: 6, maxPerKey: 4, maxBatch: 4 },
      'store',
      stats,
    );
    await waitFor(() => journal.ids().length === 2, 5000, 'both keys to start a batch');
    // Key a holds its share (4) in the window, and parks the rest; key b its 2: 6 in flight, the window.
    expect(stats.snapshot()).toMatchObject({ inFlight: 6, parked: 6 });
    expect(stats.backlogOf('a')).toBe(10);
    expect(journal.ids()).toEqual([
      [0, 1, 2, 3],
      [10, 11],
    ]);
    journal.open();
    await done;
    expect(stats.snapshot()).toMatchObject({
      inFlight: 0,
      maxInFlightSeen: 6,
      liveMailboxes: 0,
      settled: 12,
    });
    expect(journal.ids().slice(2)).toEqual([
      [4, 5, 6, 7],
      [8, 9],
    ]);
  });

  it('settles each message of a batch once the batch completed, in receive order', async () => {
    const { journal } = lane;
    const { log, onSettled } = settlementLog();
    const done = dispatch(fromIterable(items(journal, 'a', 0, 3, { gate: true }), { onSettled }));
    await waitFor(() => journal.ids().length === 1, 5000, 'the batch to start');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(log).toEqual([]);
    journal.open();
    await done;
    expect(log).toEqual(['0 done', '1 done', '2 done']);
  });

  it("counts messages, not batches, in a key's turn: once it ran `throughput` messages, another key's batch runs", async () => {
    const { journal } = lane;
    const messages = [...items(journal, 'a', 0, 8), ...items(journal, 'b', 8, 2)];
    await dispatch(fromIterable(messages), { throughput: 4, maxBatch: 2 }, 'storeNow');
    const order = journal.ids();
    const bAt = order.findIndex((ids) => ids[0] === 8);
    const aBeforeB = order.slice(0, bAt).flat().length;
    expect(aBeforeB).toBeGreaterThan(0);
    expect(aBeforeB).toBeLessThanOrEqual(4);
    if (!kind.threads) {
      // Batches that complete at once run on in the same turn while it has room: two of a's, then b's.
      expect(order).toEqual([
        [0, 1],
        [2, 3],
        [8, 9],
        [4, 5],
        [6, 7],
      ]);
    }
  });

  it('refuses a maxBatch that is not an integer from 1 to maxPerKey, naming the option, the value and its type', () => {
    const options = { executor: lane.executor, key: (m: Item) => m.key, handle: kind.handler('store') };
    expect(() => keyedBatchDispatch({ ...options, maxBatch: 0 })).toThrow(
      new TypeError(
        'keyedBatchDispatch: expected `maxBatch` to be an integer from 1 to 64 (`maxPerKey`, by default a quarter of `maxInFlight`), got 0 (number)',
      ),
    );
    expect(() => keyedBatchDispatch({ ...options, maxPerKey: 8, maxBatch: 9 })).toThrow(
      new TypeError(
        'keyedBatchDispatch: expected `maxBatch` to be an integer from 1 to 8 (`maxPerKey`), got 9 (number)',
      ),
    );
    // The bound a small window sets by default is named with the option that sets it.
    expect(() => keyedBatchDispatch({ ...options, maxInFlight: 6, maxBatch: 2 })).toThrow(
      new TypeError(
        'keyedBatchDispatch: expected `maxBatch` to be an integer from 1 to 1 (`maxPerKey`, by default a quarter of `maxInFlight`), got 2 (number)',
      ),
    );
    expect(() => keyedBatchDispatch({ ...options, maxBatch: '4' as never })).toThrow(
      /`maxBatch`.*got '4' \(string\)/,
    );
    // No linger: a batch never waits to fill.
    expect(() => keyedBatchDispatch({ ...options, linger: 5 } as never)).toThrow(
      'keyedBatchDispatch: unknown option `linger`; its options are `key`, `handle`, `executor`, `maxInFlight`, `maxPerKey`, `maxParked`, `throughput`, `onOverflow`, `stats`, `failurePolicy`, `maxBatch`',
    );
    expect(() => keyedBatchDispatch({ ...options, handle: 'store' as never })).toThrow(
      "keyedBatchDispatch: expected `handle` to be a function, got 'store' (string)",
    );
  });
});

describe('keyedBatchDispatch in virtual time', () => {
  const testScheduler = () => new TestScheduler((actual, expected) => expect(actual).toEqual(expected));

  it('runs what arrives together as one batch, and what arrives while it runs as the next one', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const executor = new KeyedExecutor({ lanes: 1 });
      const out = cold('(abc)de|').pipe(
        keyedBatchDispatch({
          executor,
          key: () => 'k',
          // Each batch takes 7 frames, then emits its messages joined.
          handle: (batch: string[], context) => timer(7, context.scheduler).pipe(map(() => batch.join(''))),
        }),
      );
      // abc from frame 0 to 7; d (frame 5) and e (frame 6) wait for it, and run together from 7 to 14.
      expectObservable(out).toBe('7ms x 6ms (y|)', { x: 'abc', y: 'de' });
    });
  });

  it('keeps keys apart: each key has batches of its own, running side by side', () => {
    testScheduler().run(({ cold, expectObservable }) => {
      const executor = new KeyedExecutor({ lanes: 1 });
      const out = cold('(abc)(de)|', { a: 'a1', b: 'b1', c: 'a2', d: 'b2', e: 'a3' }).pipe(
        keyedBatchDispatch({
          executor,
          key: (m: string) => m[0],
          handle: (batch: string[], context) => timer(7, context.scheduler).pipe(map(() => batch.join(' '))),
        }),
      );
      expectObservable(out).toBe('7ms (xy) 3ms (zw|)', { x: 'a1 a2', y: 'b1', z: 'a3', w: 'b2' });
    });
  });
});
