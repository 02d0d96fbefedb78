import { keyedBatchDispatch } from 'keyed-dispatch';
import { lastValueFrom, toArray } from 'rxjs';
import { within } from '../lanes/shared-state';
import { sleep, waitFor } from '../support/waits';
import { batchLaneKinds, type Item, items, onOneLane, type Stored } from './journal';
import { type ListSession, listReceiver } from './list-receiver';

describe.each(batchLaneKinds)('stopping keyedBatchDispatch on %s', (_name, kind) => {
  const lane = onOneLane(kind);

  const dispatch = () =>
    keyedBatchDispatch<Item, string, Stored>({
      executor: lane.executor,
      key: (m) => m.key,
      handle: kind.handler('store'),
    });

  it("gives back, when its receiver takes back what has not started, the messages waiting for their key's next batch; running batches go on", async () => {
    const { journal } = lane;
    const settled: string[] = [];
    let session: ListSession | undefined;
    // a0 and b1 run first (held at the gate); a2-a4 arrive while a0 runs and wait for a's next batch.
    const messages = [
      { key: 'a', id: 0, journal, gate: true },
      { key: 'b', id: 1, journal, gate: true },
      ...items(journal, 'a', 2, 3),
    ];
    const done = within(
      lastValueFrom(
        listReceiver(messages, settled, { available: 0, opened: (s) => (session = s) }).pipe(
          dispatch(),
          toArray(),
        ),
      ),
      10_000,
      'the output to complete',
    );
    (session as ListSession).deliverUpTo(2);
    await waitFor(() => journal.ids().length === 2, 5000, 'both keys to start');
    (session as ListSession).deliverUpTo(5);
    expect((session as ListSession).takeBack((m) => m.id !== 3)).toEqual([2, 4]);
    journal.open();
    await done;
    expect(journal.ids()).toEqual([[0], [1], [3]]);
    expect([...settled].sort()).toEqual(['0 done', '1 done', '3 done']);
  });

  it('cancels its running batches when unsubscribed, and settles none of their messages', async () => {
    const { journal } = lane;
    const settled: string[] = [];
    let session: ListSession | undefined;
    const messages = [
      ...items(journal, 'a', 0, 3, { gate: true }),
      ...items(journal, 'b', 3, 2, { gate: true }),
    ];
    const subscription = listReceiver(messages, settled, { available: 0, opened: (s) => (session = s) })
      .pipe(dispatch())
      .subscribe({ error: () => undefined });
    (session as ListSession).deliverUpTo(5);
    await waitFor(() => journal.ids().length === 2, 5000, 'both keys to start');
    subscription.unsubscribe();
    journal.open();
    await sleep(50);
    expect(settled).toEqual([]);
    expect(journal.ids()).toHaveLength(2);
  });
});
