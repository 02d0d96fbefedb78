import { RingQueue } from '../internal/ring-queue';
import {
  openReceiver,
  Receiver,
  type ReceiverSession,
  type ReceiverSink,
  type SettledListener,
} from '../receiver';

/** Raised to senders when the bus is closed. */
export class LocalBusClosedError extends Error {
  override name = 'LocalBusClosedError';
  constructor() {
    super('LocalBus is closed');
  }
}

export interface LocalBusReceiveOptions<T> {
  /** Told each message's outcome once its handler has finished. */
  onSettled?: SettledListener<T>;
}

/** A sent message waiting for a receiver's demand, with the sender's promise to resolve on admission. */
interface Pending<T> {
  message: T;
  admitted: () => void;
  rejected: (err: unknown) => void;
}

/**
 * An in-process message bus, the embedded default transport: no broker, no serialization.
 *
 * Every receiver subscribed when a message is sent gets it (publish/subscribe). `send()` is
 * local-first: its promise resolves only when every such receiver's dispatcher has admitted the
 * message into its window, so a sender that awaits it is backpressured by the slowest dispatcher
 * instead of filling memory. Messages sent while no receiver is subscribed wait for the first one,
 * so nothing is lost before start-up. `close()` lets receivers finish what was sent, then completes them.
 */
export class LocalBus<T> {
  private readonly consumers = new Set<BusConsumer<T>>();
  /** Sent while no receiver was subscribed; handed to the first one. */
  private readonly waiting = new RingQueue<Pending<T>>();
  private closed = false;

  /** Sends a message; resolves once every subscribed receiver has admitted it. */
  send(message: T): Promise<void> {
    if (this.closed) return Promise.reject(new LocalBusClosedError());
    if (this.consumers.size === 0) {
      return new Promise<void>((admitted, rejected) => this.waiting.push({ message, admitted, rejected }));
    }
    if (this.consumers.size === 1) {
      for (const consumer of this.consumers) return consumer.offer(message);
    }
    return Promise.all([...this.consumers].map((c) => c.offer(message))).then(() => undefined);
  }

  /** A receiver of everything sent from now on (plus what waited for a first receiver). */
  receive(options: LocalBusReceiveOptions<T> = {}): Receiver<T> {
    return new BusReceiver(this, options.onSettled);
  }

  /** Refuses further sends; receivers complete once they have delivered what was already sent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const pending of this.waiting.toArray()) pending.rejected(new LocalBusClosedError());
    this.waiting.clear();
    for (const consumer of this.consumers) consumer.close();
  }

  /** Subscribed receivers right now. */
  get receivers(): number {
    return this.consumers.size;
  }

  /** @internal */
  join(consumer: BusConsumer<T>): void {
    if (this.closed) {
      consumer.close();
      return;
    }
    this.consumers.add(consumer);
    for (let p = this.waiting.shift(); p !== undefined; p = this.waiting.shift()) consumer.enqueue(p);
  }

  /** @internal */
  leave(consumer: BusConsumer<T>): void {
    this.consumers.delete(consumer);
  }
}

class BusReceiver<T> extends Receiver<T> {
  constructor(
    private readonly bus: LocalBus<T>,
    private readonly onSettled: SettledListener<T> | undefined,
  ) {
    super();
  }

  [openReceiver](sink: ReceiverSink<T>): ReceiverSession<T> {
    const consumer = new BusConsumer(this.bus, sink, this.onSettled);
    this.bus.join(consumer);
    return consumer;
  }
}

/** One receiver's subscription to the bus: its queue of sent messages and its demand. */
class BusConsumer<T> implements ReceiverSession<T> {
  /** Sent to this receiver and not yet delivered (no demand yet). */
  private readonly queue = new RingQueue<Pending<T>>();
  /** Requested and not yet delivered. */
  private demand = 0;
  /** True while delivering: a re-entrant request or send only queues. */
  private delivering = false;
  private closing = false;
  private cancelled = false;

  constructor(
    private readonly bus: LocalBus<T>,
    private readonly sink: ReceiverSink<T>,
    private readonly onSettled: SettledListener<T> | undefined,
  ) {}

  offer(message: T): Promise<void> {
    if (this.demand > 0 && this.queue.size === 0 && !this.delivering) {
      // Fast path: room in the window right now, admit in place.
      this.demand--;
      this.delivering = true;
      try {
        this.sink.next(message);
      } finally {
        this.delivering = false;
      }
      this.flush();
      return Promise.resolve();
    }
    return new Promise<void>((admitted, rejected) => this.enqueue({ message, admitted, rejected }));
  }

  enqueue(pending: Pending<T>): void {
    if (this.cancelled) {
      pending.rejected(new LocalBusClosedError());
      return;
    }
    this.queue.push(pending);
    this.flush();
  }

  request(n: number): void {
    this.demand += n;
    this.flush();
  }

  settle(message: T, outcome: 'done' | 'failed', error?: unknown): void {
    this.onSettled?.(message, outcome, error);
  }

  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.bus.leave(this);
    // Senders waiting on this receiver are released with an error: it will never admit their messages.
    for (let p = this.queue.shift(); p !== undefined; p = this.queue.shift()) p.rejected(new LocalBusClosedError());
  }

  close(): void {
    this.closing = true;
    this.flush();
  }

  private flush(): void {
    if (this.delivering || this.cancelled) return;
    this.delivering = true;
    try {
      while (this.demand > 0 && this.queue.size > 0 && !this.cancelled) {
        const pending = this.queue.shift() as Pending<T>;
        this.demand--;
        this.sink.next(pending.message);
        pending.admitted();
      }
    } finally {
      this.delivering = false;
    }
    if (this.closing && this.queue.size === 0 && !this.cancelled) {
      this.cancelled = true;
      this.bus.leave(this);
      this.sink.complete();
    }
  }
}
