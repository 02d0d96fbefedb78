import { RingQueue } from '../internal/ring-queue';
import {
  createReceiver,
  type Receiver,
  type ReceiverOptions,
  type ReceiverSink,
  type SettledListener,
} from '../receiver';
import { NOTHING, PullSession } from './pull-session';

/** Raised to senders when the bus is closed. */
export class LocalBusClosedError extends Error {
  override name = 'LocalBusClosedError';
  constructor() {
    super('LocalBus is closed');
  }
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
  receive(options: ReceiverOptions<T> = {}): Receiver<T> {
    return createReceiver((sink) => {
      const consumer = new BusConsumer(this, sink, options.onSettled);
      this.join(consumer);
      return consumer;
    });
  }

  /** Refuses further sends; receivers complete once they have delivered what was already sent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const pending of this.waiting.toArray()) pending.rejected(new LocalBusClosedError());
    this.waiting.clear();
    for (const consumer of this.consumers) consumer.closeAfterQueue();
  }

  /** Subscribed receivers right now. */
  get receivers(): number {
    return this.consumers.size;
  }

  /** @internal */
  join(consumer: BusConsumer<T>): void {
    if (this.closed) {
      consumer.closeAfterQueue();
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

/** What `offer` returns when the message was admitted in place: one settled promise shared by all. */
const ADMITTED = Promise.resolve();

/** One receiver's subscription to the bus: its queue of sent messages, delivered against its demand. */
class BusConsumer<T> extends PullSession<T> {
  /** Sent to this receiver and not yet delivered (no demand yet). */
  private readonly queue = new RingQueue<Pending<T>>();
  /** The bus closed: complete once the queue is delivered. */
  private busClosed = false;

  constructor(
    private readonly bus: LocalBus<T>,
    sink: ReceiverSink<T>,
    onSettled: SettledListener<T> | undefined,
  ) {
    super(sink, onSettled);
  }

  offer(message: T): Promise<void> {
    // Fast path: room in the window and nothing queued ahead, so it is admitted in place.
    if (this.queue.size === 0 && this.deliver(message)) {
      // Sent, or the bus closed, from inside that delivery.
      if (this.queue.size > 0 || this.busClosed) this.drain();
      return ADMITTED;
    }
    return new Promise<void>((admitted, rejected) => this.enqueue({ message, admitted, rejected }));
  }

  enqueue(pending: Pending<T>): void {
    if (this.stopped) {
      pending.rejected(new LocalBusClosedError());
      return;
    }
    this.queue.push(pending);
    this.drain();
  }

  /** The bus closed: delivers what is queued, then completes. */
  closeAfterQueue(): void {
    this.busClosed = true;
    this.drain();
  }

  protected override take(): T | typeof NOTHING {
    const pending = this.queue.shift();
    if (pending === undefined) return NOTHING;
    pending.admitted();
    return pending.message;
  }

  protected override drain(): void {
    super.drain();
    // From inside a delivery, the delivery under way completes it once it is over.
    if (this.busClosed && this.queue.size === 0 && !this.delivering) this.complete();
  }

  protected override close(): void {
    this.bus.leave(this);
    // Senders waiting on this receiver are released with an error: it will never admit their messages.
    for (let p = this.queue.shift(); p !== undefined; p = this.queue.shift())
      p.rejected(new LocalBusClosedError());
  }
}
