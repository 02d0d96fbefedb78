import {
  NOTHING,
  openReceiver,
  PullSession,
  Receiver,
  type ReceiverSession,
  type ReceiverSink,
  type Settlement,
} from 'keyed-dispatch';
import type { Item } from './journal';

/**
 * A transport-like session over a list: it says where each message came from, records each settlement
 * as `id outcome`, delivers only as far as the spec lets it, and can take back what has not started, as
 * a transport does when its partitions are revoked.
 */
export class ListSession extends PullSession<Item> {
  private next = 0;

  constructor(
    sink: ReceiverSink<Item>,
    private readonly messages: readonly Item[],
    private readonly settled: string[],
    private available: number,
  ) {
    super(sink);
  }

  describe(message: Item): string {
    return `list 'spec' position ${this.messages.findIndex((m) => m.id === message.id)}`;
  }

  /** Lets the first `count` messages be delivered; the source ends once all of them were. */
  deliverUpTo(count: number): void {
    this.available = count;
    this.drain();
  }

  /** The ids of the messages `matches` accepts that had not started, taken back. */
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

/**
 * A receiver of `messages` whose session (given to `opened`) delivers the first `available` of them at
 * once (all by default) and records settlements in `settled`.
 */
export function listReceiver(
  messages: readonly Item[],
  settled: string[],
  {
    available = messages.length,
    opened = () => undefined,
  }: {
    available?: number;
    opened?: (session: ListSession) => void;
  } = {},
): Receiver<Item> {
  return new (class extends Receiver<Item> {
    [openReceiver](sink: ReceiverSink<Item>): ReceiverSession<Item> {
      const session = new ListSession(sink, messages, settled, available);
      opened(session);
      return session;
    }
  })();
}
