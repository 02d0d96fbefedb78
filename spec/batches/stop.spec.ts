import {
  keyedBatchDispatch,
  NOTHING,
  openReceiver,
  PullSession,
  Receiver,
  type ReceiverSession,
  type ReceiverSink,
  type Settlement,
} from 'keyed-dispatch';
import { lastValueFrom, toArray } from 'rxjs';
import { sleep, waitUntil, within } from '../lanes/shared-state';
import { type BatchLaneKind, batchLaneKinds, type Item, items, Journal, type Stored } from './journal';

/**
 * A session over a list that delivers only as far as the spec lets it, and can take back what has not
 * started, as a transport does when its partitions are revoked.
 */
class Revocable extends PullSession<Item> {
  private next = 0;
  private available = 0;
  constructor(
    sink: ReceiverSink<Item>,
    private readonly messages: readonly Item[],
    private readonly settled: string[],
  ) {
    super(sink);
  }

  /** Lets the first `count` messages be delivered; with all of them, the source ends once they are. */
  deliverUpTo(count: number): void {
    this.available = count;
    this.drain();
  }

  takeBack(matches: (m: Item) => boolean): number[] {
    return this.discard(matches).map((m) => m.id);
  }

  protected override take(): Item | typeof NOTHING {
    if (this.next < this.available) return this.messages[this.next++] as Item;
    if (this.next === this.messages.length) this.complete();
    return NOTHING;
  }

  protected override acknowledge(message: Item, outcome: Settlement): void {
    this.settled.push(`${message.id} ${outcome}`);
  }
}

/** A receiver of one `Revocable` session, which `opened` is given. */
function revocable(messages: readonly Item[], settled: string[], opened: (session: Revocable) => void) {
  return new (class extends Receiver<Item> {
    [openReceiver](sink: ReceiverSink<Item>): ReceiverSession<Item> {
      const session = new Revocable(sink, messages, settled);
      opened(session);
      return session;
    }
  })();
}

describe.each(batchLaneKinds)('stopping keyedBatchDispatch on %s', (_name, kind) => {
  let lanes: ReturnType<BatchLaneKind['executor']>;
  let journal: Journal;
  beforeEach(() => {
    lanes = kind.executor(1);
    journal = new Journal();
  });
  afterEach(() => lanes.close());

  const dispatch = () =>
    keyedBatchDispatch<Item, string, Stored>({
      executor: lanes.executor,
      key: (m) => m.key,
      handle: kind.handler('store'),
    });

  it("gives back, when its receiver takes back what has not started, the messages waiting for their key's next batch; running batches go on", async () => {
    const settled: string[] = [];
    let session: Revocable | undefined;
    // a0 and b1 run first (held at the gate); a2-a4 arrive while a0 runs and wait for a's next batch.
    const messages = [
      { key: 'a', id: 0, journal, gate: true },
      { key: 'b', id: 1, journal, gate: true },
      ...items(journal, 'a', 2, 3),
    ];
    const done = within(
      lastValueFrom(revocable(messages, settled, (s) => (session = s)).pipe(dispatch(), toArray())),
      10_000,
      'the output to complete',
    );
    (session as Revocable).deliverUpTo(2);
    await waitUntil(() => journal.ids().length === 2, 5000, 'both keys to start');
    (session as Revocable).deliverUpTo(5);
    expect((session as Revocable).takeBack((m) => m.id !== 3)).toEqual([2, 4]);
    journal.open();
    await done;
    expect(journal.ids()).toEqual([[0], [1], [3]]);
    expect([...settled].sort()).toEqual(['0 done', '1 done', '3 done']);
  });

  it('cancels its running batches when unsubscribed, and settles none of their messages', async () => {
    const settled: string[] = [];
    let session: Revocable | undefined;
    const messages = [
      ...items(journal, 'a', 0, 3, { gate: true }),
      ...items(journal, 'b', 3, 2, { gate: true }),
    ];
    const subscription = revocable(messages, settled, (s) => (session = s))
      .pipe(dispatch())
      .subscribe({ error: () => undefined });
    (session as Revocable).deliverUpTo(5);
    await waitUntil(() => journal.ids().length === 2, 5000, 'both keys to start');
    subscription.unsubscribe();
    journal.open();
    await sleep(50);
    expect(settled).toEqual([]);
    expect(journal.ids()).toHaveLength(2);
  });
});
