import { KeyedExecutor, keyedDispatch } from 'keyed-dispatch';
import { lastValueFrom, toArray } from 'rxjs';
import { type Item, items, Journal } from '../batches/journal';
import { type ListSession, listReceiver } from '../batches/list-receiver';
import { outcomeOf, within } from '../lanes/shared-state';

describe('a receiver taking back queued messages', () => {
  it('with a predicate that throws errors the output with what it threw, acknowledging none of them', async () => {
    const settled: string[] = [];
    let session: ListSession | undefined;
    const receiver = listReceiver(items(new Journal(), 'k', 1, 3), settled, { opened: (s) => (session = s) });
    // The key's first message never ends, so the other two stay queued behind it.
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch({
          executor: new KeyedExecutor({ lanes: 1 }),
          key: (m: Item) => m.key,
          handle: () => new Promise<number>(() => undefined),
        }),
        toArray(),
      ),
    );
    const outcome = outcomeOf(within(output, 5000, 'the output to end'));
    let taken: number[] | undefined;
    let thrown: unknown;
    try {
      taken = session?.takeBack((m) => {
        if (m.id === 3) throw new Error('predicate threw');
        return true;
      });
    } catch (err) {
      thrown = err;
    }
    expect(await outcome).toEqual({ error: expect.objectContaining({ message: 'predicate threw' }) });
    expect({ taken, thrown }).toEqual({ taken: [], thrown: undefined });
    expect(settled).toEqual([]);
  });
});
