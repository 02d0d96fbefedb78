import {
  KeyedExecutor,
  keyedDispatch,
  NOTHING,
  openReceiver,
  PullSession,
  Receiver,
  type ReceiverSession,
  type ReceiverSink,
  type Settlement,
} from 'keyed-dispatch';
import { lastValueFrom, toArray } from 'rxjs';
import { outcomeOf, within } from '../lanes/shared-state';

/** A session over a list that takes back queued messages as a transport does when its partitions are revoked. */
class RevokingSession extends PullSession<number> {
  private next = 0;
  constructor(
    sink: ReceiverSink<number>,
    private readonly messages: readonly number[],
    readonly acknowledged: string[],
  ) {
    super(sink);
  }
  revoke(matches: (m: number) => boolean): number[] {
    return this.discard(matches);
  }
  protected override take(): number | typeof NOTHING {
    return this.next < this.messages.length ? (this.messages[this.next++] as number) : NOTHING;
  }
  protected override acknowledge(message: number, outcome: Settlement): void {
    this.acknowledged.push(`${message} ${outcome}`);
  }
}

describe('a receiver taking back queued messages', () => {
  it('with a predicate that throws errors the output with what it threw, acknowledging none of them', async () => {
    const acknowledged: string[] = [];
    let session: RevokingSession | undefined;
    const receiver = new (class extends Receiver<number> {
      [openReceiver](sink: ReceiverSink<number>): ReceiverSession<number> {
        session = new RevokingSession(sink, [1, 2, 3], acknowledged);
        return session;
      }
    })();
    // The key's first message never ends, so the other two stay queued behind it.
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch({
          executor: new KeyedExecutor({ workers: 1 }),
          key: () => 'k',
          handle: () => new Promise<number>(() => undefined),
        }),
        toArray(),
      ),
    );
    const outcome = outcomeOf(within(output, 5000, 'the output to end'));
    let taken: number[] | undefined;
    let thrown: unknown;
    try {
      taken = session?.revoke((m) => {
        if (m === 3) throw new Error('predicate threw');
        return true;
      });
    } catch (err) {
      thrown = err;
    }
    expect(await outcome).toEqual({ error: expect.objectContaining({ message: 'predicate threw' }) });
    expect({ taken, thrown }).toEqual({ taken: [], thrown: undefined });
    expect(acknowledged).toEqual([]);
  });
});
