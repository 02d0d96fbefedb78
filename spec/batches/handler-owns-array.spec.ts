import { fromIterable, keyedBatchDispatch, retryPolicy } from 'keyed-dispatch';
import { lastValueFrom, toArray } from 'rxjs';
import { outcomeOf, within } from '../lanes/shared-state';
import { batchLaneKinds, type Item, items, onOneLane, type Stored, settlementLog } from './journal';

/** What a handler does to the array it was handed (see `mangle` in batch-handlers.js). */
const mangles = [
  ['consumes it with shift()', 'shift'],
  ['pushes a message of its own into it', 'push'],
  ['sorts it backwards', 'reverse'],
  ['keeps it and empties it from a timer', 'later'],
] as const;

describe.each(batchLaneKinds)('a batch handler that treats its array as its own on %s', (_name, kind) => {
  const lane = onOneLane(kind);

  /** Keys a and b, 6 messages each, every message of a key in one batch; `extra` on each of them. */
  function messagesOf(mangle: Item['mangle'], extra: (m: Item) => Partial<Item> = () => ({})): Item[] {
    const { journal } = lane;
    return [...items(journal, 'a', 0, 6, { mangle }), ...items(journal, 'b', 6, 6, { mangle })].map((m) => ({
      ...m,
      ...extra(m),
    }));
  }

  function dispatch(
    messages: Item[],
    onSettled: ReturnType<typeof settlementLog>['onSettled'],
    withPolicy: boolean,
  ) {
    return outcomeOf(
      within(
        lastValueFrom(
          fromIterable(messages, { onSettled }).pipe(
            keyedBatchDispatch<Item, string, Stored>({
              executor: lane.executor,
              key: (m) => m.key,
              handle: kind.handler('mangle'),
              failurePolicy: withPolicy
                ? retryPolicy({ maxAttempts: 2, backoff: { initialMs: 1, jitter: 0 }, deadLetter: () => {} })
                : undefined,
            }),
            toArray(),
          ),
        ),
        10_000,
        'the output to complete',
      ),
    );
  }

  describe.each(mangles)('(it %s)', (_what, mangle) => {
    it('settles each of its messages done once, in key order, and the output completes', async () => {
      const { log, onSettled } = settlementLog();
      const messages = messagesOf(mangle);
      const outcome = await dispatch(messages, onSettled, false);
      expect(outcome).toEqual({
        value: expect.arrayContaining([
          expect.objectContaining({ key: 'a', ids: [0, 1, 2, 3, 4, 5] }),
          expect.objectContaining({ key: 'b', ids: [6, 7, 8, 9, 10, 11] }),
        ]),
      });
      expect(log.filter((s) => Number(s.split(' ')[0]) < 6)).toEqual(
        [0, 1, 2, 3, 4, 5].map((id) => `${id} done`),
      );
      expect(log.filter((s) => Number(s.split(' ')[0]) >= 6)).toEqual(
        [6, 7, 8, 9, 10, 11].map((id) => `${id} done`),
      );
    });

    it('under retryPolicy, retries the batch and takes it apart from the messages it was given, dead-lettering only the poison one', async () => {
      const { journal } = lane;
      const { log, onSettled } = settlementLog();
      const messages = messagesOf(mangle, (m) => (m.id === 3 ? { poison: true } : {}));
      const outcome = await dispatch(messages, onSettled, true);
      const a = [0, 1, 2, 3, 4, 5];
      // Key a: the batch twice, then each message alone, 3 twice (its own attempts); key b once.
      expect(journal.ids().filter((ids) => ids[0] < 6)).toEqual([a, a, [0], [1], [2], [3], [3], [4], [5]]);
      expect(journal.ids().filter((ids) => ids[0] >= 6)).toEqual([[6, 7, 8, 9, 10, 11]]);
      expect(outcome).toEqual({
        value: expect.arrayContaining([
          ...[0, 1, 2, 4, 5].map((id) => expect.objectContaining({ key: 'a', ids: [id] })),
          expect.objectContaining({ key: 'b', ids: [6, 7, 8, 9, 10, 11] }),
        ]),
      });
      expect((outcome as { value: Stored[] }).value).toHaveLength(6);
      expect(log.filter((s) => Number(s.split(' ')[0]) < 6)).toEqual(
        a.map((id) => `${id} ${id === 3 ? 'dead-lettered' : 'done'}`),
      );
      expect(log.filter((s) => Number(s.split(' ')[0]) >= 6)).toEqual(
        [6, 7, 8, 9, 10, 11].map((id) => `${id} done`),
      );
    });
  });
});
