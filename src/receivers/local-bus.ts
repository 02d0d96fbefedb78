import { defaultFailurePolicy } from '../default-failure-policy';
import { RingQueue } from '../internal/ring-queue';
import {
  createReceiver,
  type Receiver,
  type ReceiverOptions,
  type ReceiverSink,
  type SettledListener,
  settledListenerOf,
} from '../receiver';
import { integerOption, optionsObject } from '../validate';
import { NOTHING, PullSession } from './pull-session';

/** Raised to senders when the bus is closed, or when the receiver their message waited in left. */
export class LocalBusClosedError extends Error {
  /** The error's name, for logs and `instanceof`-free checks. */
  override name = 'LocalBusClosedError';
  constructor() {
    super('LocalBus is closed');
  }
}

/** Options of `new LocalBus()`. */
export interface LocalBusOptions {
  /**
   * How many sent, undelivered messages one receiver's queue holds before `send()` waits: a send
   * resolves as soon as its message is among the first `maxPending` undelivered messages of every
   * subscribed receiver's queue (of the bus's own queue, before any receiver subscribed). Integer ≥ 0;
   * `0` resolves a send only when a dispatcher takes its message in: into its window, or, when the
   * message's key is at its share (`maxPerKey`), into its parking area (`maxParked`), which then bounds
   * what a producer awaiting each send can get ahead. Default 1,024.
   */
  maxPending?: number;
}

const DEFAULT_MAX_PENDING = 1024;

/** What `send()` returns when its message needs no waiting: one settled promise shared by all. */
const ACCEPTED = Promise.resolve();

/** A sender whose message sits beyond the bound of a queue, waiting for it to come within. */
interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Sent messages not yet delivered, in send order, and the senders still waiting for room. A message
 * pushed while the queue holds fewer than `maxPending` is accepted at once; one pushed beyond that gets
 * a waiter, released when enough messages ahead of it have been taken that it is among the first
 * `maxPending`. So the waiters always belong to the last `waiters.size` messages, oldest first, and each
 * `shift` releases at most one of them.
 */
class SendQueue<T> {
  private readonly messages = new RingQueue<T>();
  private readonly waiters = new RingQueue<Waiter>();

  constructor(private readonly maxPending: number) {}

  get size(): number {
    return this.messages.size;
  }

  /** Queues `message`: `ACCEPTED` within the bound, else a promise of its coming within it. */
  push(message: T): Promise<void> {
    this.messages.push(message);
    if (this.messages.size <= this.maxPending) return ACCEPTED;
    return new Promise<void>((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  shift(): T | undefined {
    const message = this.messages.shift();
    // The oldest waiter's message is at index `size - waiters.size`: released once that is within the bound.
    if (this.waiters.size > 0 && this.messages.size - this.waiters.size < this.maxPending) {
      (this.waiters.shift() as Waiter).resolve();
    }
    return message;
  }

  /** Drops the messages whose senders still wait, rejecting those senders; keeps the accepted ones. */
  rejectWaiting(err: () => unknown): void {
    if (this.waiters.size === 0) return;
    const accepted = this.messages.size - this.waiters.size;
    // The waiting messages are the last ones: rotate the accepted ones behind them, then drop them.
    for (let i = 0; i < accepted; i++) this.messages.push(this.messages.shift() as T);
    for (let w = this.waiters.shift(); w !== undefined; w = this.waiters.shift()) {
      this.messages.shift();
      w.reject(err());
    }
  }

  /** Drops every message, rejecting the senders still waiting. */
  clear(err: () => unknown): void {
    this.messages.clear();
    for (let w = this.waiters.shift(); w !== undefined; w = this.waiters.shift()) w.reject(err());
  }
}

const closedError = (): unknown => new LocalBusClosedError();

/**
 * An in-process message bus, the embedded default transport: no broker, no serialization.
 *
 * Every receiver subscribed when a message is sent gets it (publish/subscribe). Messages sent while no
 * receiver is subscribed wait for the first one, so nothing is lost before start-up. `close()` refuses
 * further sends and lets receivers finish what was sent, then completes them.
 *
 * `send()` is local-first: it resolves once the message has been handed to every subscribed receiver's
 * queue, as long as that queue holds fewer than `maxPending` undelivered messages; beyond that it waits
 * until its message is among the first `maxPending` (each message the dispatcher takes in lets one more
 * sender go). So a handler that awaits a send never waits for a window slot — a loop of handlers that
 * await their sends (command → event → saga → command) completes as long as fewer than `maxPending`
 * messages are waiting in each receiver's queue — while a producer that awaits each send is paced by the
 * dispatcher, holding at most `maxPending` messages (plus one per waiting sender) per receiver.
 */
export class LocalBus<T> {
  /** Subscribed receivers; replaced, never changed in place, so a send iterates a stable list. */
  #consumers: BusConsumer<T>[] = [];
  /** Sent while no receiver was subscribed; becomes the first receiver's queue. */
  #waiting: SendQueue<T>;
  #closed = false;
  readonly #maxPending: number;

  constructor(options: LocalBusOptions = {}) {
    optionsObject('LocalBus', options, ['maxPending'] satisfies Array<keyof LocalBusOptions>);
    this.#maxPending = integerOption('LocalBus', 'maxPending', options.maxPending, DEFAULT_MAX_PENDING, 0);
    this.#waiting = new SendQueue(this.#maxPending);
  }

  /**
   * Sends a message to every subscribed receiver (or keeps it for the first one). Resolves once it is
   * among the first `maxPending` undelivered messages of each of their queues — at once while they have
   * room, with one shared promise; rejects with `LocalBusClosedError` once the bus is closed, or when a
   * receiver leaves while the message still waits for room in its queue.
   */
  send(message: T): Promise<void> {
    if (this.#closed) return Promise.reject(new LocalBusClosedError());
    const consumers = this.#consumers;
    if (consumers.length === 1) return consumers[0].offer(message);
    if (consumers.length === 0) return this.#waiting.push(message);
    let waits: Promise<void>[] | null = null;
    for (const consumer of consumers) {
      const offered = consumer.offer(message);
      if (offered !== ACCEPTED) (waits ??= []).push(offered);
    }
    if (waits === null) return ACCEPTED;
    return waits.length === 1 ? waits[0] : Promise.all(waits).then(() => undefined);
  }

  /** A receiver of everything sent from now on (plus what waited for a first receiver). */
  receive(options: ReceiverOptions<T> = {}): Receiver<T> {
    const onSettled = settledListenerOf('LocalBus.receive', options);
    return createReceiver((sink) => {
      const consumer = new BusConsumer((c) => this.#leave(c), this.#takeWaiting(), sink, onSettled);
      this.#join(consumer);
      return consumer;
    }, 'LocalBus.receive()');
  }

  /**
   * Refuses further sends. Receivers complete once they have delivered what was already sent; what was
   * sent before any receiver subscribed goes to the first one, except the messages whose senders still
   * waited for room: those senders are rejected with `LocalBusClosedError`.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#waiting.rejectWaiting(closedError);
    for (const consumer of this.#consumers) consumer.closeAfterQueue();
  }

  /** Subscribed receivers right now. */
  get receivers(): number {
    return this.#consumers.length;
  }

  /**
   * Sent messages not yet delivered to a dispatcher, counted once per receiver queue they wait in (plus
   * those waiting for a first receiver): what the bus holds in memory.
   */
  get pending(): number {
    let n = this.#waiting.size;
    for (const consumer of this.#consumers) n += consumer.queued;
    return n;
  }

  /** The queue for a new receiver: what waited for a first receiver, if it is the first. */
  #takeWaiting(): SendQueue<T> {
    if (this.#consumers.length > 0 || this.#waiting.size === 0) return new SendQueue(this.#maxPending);
    const queue = this.#waiting;
    this.#waiting = new SendQueue(this.#maxPending);
    return queue;
  }

  #join(consumer: BusConsumer<T>): void {
    this.#consumers = [...this.#consumers, consumer];
    if (this.#closed) consumer.closeAfterQueue();
  }

  #leave(consumer: BusConsumer<T>): void {
    this.#consumers = this.#consumers.filter((c) => c !== consumer);
  }
}

/** One receiver's subscription to the bus: its queue of sent messages, delivered against its demand. */
class BusConsumer<T> extends PullSession<T> {
  /** The stand-in for a broker behaves as one: with no \`failurePolicy\`, a failed message is retried in its key's mailbox. */
  readonly defaultFailurePolicy = defaultFailurePolicy<T>();

  /** The bus closed: complete once the queue is delivered. */
  private busClosed = false;

  constructor(
    /** Takes the consumer off its bus. */
    private readonly leave: (consumer: BusConsumer<T>) => void,
    /** Sent to this receiver and not yet delivered (no demand yet). */
    private readonly queue: SendQueue<T>,
    sink: ReceiverSink<T>,
    onSettled: SettledListener<T> | undefined,
  ) {
    super(sink, onSettled);
  }

  get queued(): number {
    return this.queue.size;
  }

  offer(message: T): Promise<void> {
    // Fast path: room in the window and nothing queued ahead, so it is admitted in place.
    if (this.queue.size === 0 && this.deliver(message)) {
      // Sent, or the bus closed, from inside that delivery.
      if (this.queue.size > 0 || this.busClosed) this.drain();
      return ACCEPTED;
    }
    if (this.stopped) return Promise.reject(new LocalBusClosedError());
    const accepted = this.queue.push(message);
    this.drain();
    return accepted;
  }

  /** The bus closed: delivers what is queued, then completes. */
  closeAfterQueue(): void {
    this.busClosed = true;
    this.drain();
  }

  protected override take(): T | typeof NOTHING {
    return this.queue.size === 0 ? NOTHING : (this.queue.shift() as T);
  }

  protected override drain(): void {
    super.drain();
    // From inside a delivery, the delivery under way completes it once it is over.
    if (this.busClosed && this.queue.size === 0 && !this.delivering) this.complete();
  }

  protected override close(): void {
    this.leave(this);
    // Senders still waiting for room in it are told so; what it had accepted is handed back (a runtime's
    // stop reports it), since the bus cannot deliver it again.
    this.queue.rejectWaiting(closedError);
    while (this.queue.size > 0) this.undelivered(this.queue.shift() as T);
  }
}
