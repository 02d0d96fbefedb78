import {
  openReceiver,
  Receiver,
  type ReceiverSession,
  type ReceiverSink,
  type Settlement,
} from 'keyed-dispatch';

/** Orders what receivers saw across instances: each event takes the next tick. */
let tick = 0;

/**
 * A receiver driven by the spec: it holds a list of messages, delivers them only against demand, and
 * records what was requested, settled and cancelled — a small transport whose broker is the spec.
 */
export class ManualReceiver<T> extends Receiver<T> {
  /** Every `request(n)` it got, in order. */
  readonly requests: number[] = [];
  readonly settled: Array<{ message: T; outcome: Settlement; error?: unknown }> = [];
  cancelled = false;
  /** Tick at which a dispatcher opened it, and at which it got its first request (-1: not yet). */
  openedAt = -1;
  firstRequestAt = -1;
  private sink: ReceiverSink<T> | null = null;
  private demand = 0;
  private readonly pending: T[] = [];

  constructor(
    /** Replaces the cancellation: throws, or returns a promise of the transport's close. */
    private readonly onCancel: () => void | Promise<void> = () => undefined,
  ) {
    super();
  }

  /** Makes messages available; they are delivered as far as demand allows. */
  push(...messages: T[]): void {
    this.pending.push(...messages);
    this.flush();
  }

  get undelivered(): number {
    return this.pending.length;
  }

  [openReceiver](sink: ReceiverSink<T>): ReceiverSession<T> {
    this.sink = sink;
    this.openedAt = tick++;
    return {
      request: (n) => {
        if (this.firstRequestAt < 0) this.firstRequestAt = tick++;
        this.requests.push(n);
        this.demand += n;
        this.flush();
      },
      settle: (message, outcome, error) => {
        this.settled.push(error === undefined ? { message, outcome } : { message, outcome, error });
      },
      cancel: () => {
        this.cancelled = true;
        return this.onCancel();
      },
    };
  }

  /** Delivers a message even without demand or after cancellation, as a misbehaving transport might. */
  deliverNow(message: T): void {
    this.sink?.next(message);
  }

  private flush(): void {
    while (this.sink !== null && !this.cancelled && this.demand > 0 && this.pending.length > 0) {
      this.demand--;
      this.sink.next(this.pending.shift() as T);
    }
  }
}
