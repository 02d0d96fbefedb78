import type { Consumer, ConsumerMessages } from '@nats-io/jetstream';
import {
  openReceiver,
  Receiver,
  type ReceiverSession,
  type ReceiverSink,
  type SettledListener,
  type Settlement,
} from '../receiver';
import { describe, functionOption, integerOption, optionsObject } from '../validate';
import { type JetStreamMessage, toMessage } from './message';

/**
 * What a `failed` settlement does: `'nak'` asks for redelivery at once, `{ nakDelayMs }` after that
 * delay, `'term'` tells the server never to redeliver the message. Redelivery stops at the consumer's
 * `max_deliver` either way.
 */
export type JetStreamFailedAction = 'nak' | 'term' | { nakDelayMs: number };

/** Options of `fromJetStream`. Invalid values throw a `TypeError` naming the option. */
export interface JetStreamOptions {
  /**
   * A pull consumer (`await jetstream(nc).consumers.get(stream, durable)`), created with
   * `ack_policy: AckPolicy.Explicit`. Its `ack_wait` is how long a dead process's messages stay
   * unacknowledged before they are redelivered; its `max_ack_pending` caps all its processes together.
   */
  consumer: Consumer;
  /**
   * How long one fetch waits for its messages before it is renewed. Integer ≥ 1000 ms (the client's
   * minimum). Default 5000.
   */
  expiresMs?: number;
  /** What a `failed` settlement does. Default `'nak'`. */
  onFailed?: JetStreamFailedAction;
  /** Told each message's outcome after it was acknowledged (`ack`, `nak` or `term` sent). */
  onSettled?: SettledListener<JetStreamMessage>;
}

interface ResolvedOptions {
  consumer: Consumer;
  expiresMs: number;
  fail: (message: JetStreamMessage) => void;
  onSettled: SettledListener<JetStreamMessage> | undefined;
}

/**
 * A receiver over a JetStream pull consumer. Each fetch asks for exactly the free window, one fetch at a
 * time (so messages are delivered in the order the server sends them); each message is acknowledged
 * after its handler completed, and a failed one is nak'ed or terminated per `onFailed`.
 */
export function fromJetStream(options: JetStreamOptions): Receiver<JetStreamMessage> {
  return new JetStreamReceiver(resolveOptions(options));
}

function resolveOptions(options: JetStreamOptions): ResolvedOptions {
  const owner = 'fromJetStream';
  optionsObject(owner, options);
  const consumer = options.consumer as Partial<Consumer> | undefined;
  if (consumer === null || typeof consumer !== 'object' || typeof consumer.fetch !== 'function') {
    throw new TypeError(
      `${owner}: expected \`consumer\` to be a JetStream pull consumer, got ${describe(consumer)}`,
    );
  }
  return {
    consumer: options.consumer,
    expiresMs: integerOption(owner, 'expiresMs', options.expiresMs, 5000, 1000),
    fail: failedAction(owner, options.onFailed),
    onSettled:
      options.onSettled === undefined ? undefined : functionOption(owner, 'onSettled', options.onSettled),
  };
}

function failedAction(owner: string, action: unknown): (message: JetStreamMessage) => void {
  if (action === undefined || action === 'nak') return (m) => m.msg.nak();
  if (action === 'term') return (m) => m.msg.term();
  if (action !== null && typeof action === 'object') {
    const delay = integerOption(
      owner,
      'onFailed.nakDelayMs',
      (action as { nakDelayMs?: unknown }).nakDelayMs,
      -1,
      0,
    );
    if (delay >= 0) return (m) => m.msg.nak(delay);
  }
  throw new TypeError(
    `${owner}: expected \`onFailed\` to be 'nak', 'term' or { nakDelayMs }, got ${describe(action)}`,
  );
}

class JetStreamReceiver extends Receiver<JetStreamMessage> {
  constructor(private readonly options: ResolvedOptions) {
    super();
  }

  [openReceiver](sink: ReceiverSink<JetStreamMessage>): ReceiverSession<JetStreamMessage> {
    const session = new JetStreamSession(this.options, sink);
    void session.run();
    return session;
  }
}

/** One subscription: a loop of fetches sized to the demand, plus acknowledgements. */
class JetStreamSession implements ReceiverSession<JetStreamMessage> {
  /** Requested and not yet delivered. A fetch asks for all of it; it only grows while one runs. */
  private demand = 0;
  private stopped = false;
  /** The fetch under way, closed on cancellation. */
  private batch: ConsumerMessages | null = null;
  /** Ends the loop's wait for demand (new demand, cancellation). */
  private wakeUp: (() => void) | null = null;

  constructor(
    private readonly options: ResolvedOptions,
    private readonly sink: ReceiverSink<JetStreamMessage>,
  ) {}

  request(n: number): void {
    this.demand += n;
    this.wakeUp?.();
  }

  settle(message: JetStreamMessage, outcome: Settlement, error?: unknown): void {
    if (outcome === 'done') message.msg.ack();
    else this.options.fail(message);
    this.options.onSettled?.(message, outcome, error);
  }

  cancel(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.wakeUp?.();
    // Messages the fetch still brings are not delivered: unacknowledged, they come again after ack_wait.
    void this.batch?.close();
  }

  async run(): Promise<void> {
    try {
      while (!this.stopped) {
        if (this.demand <= 0) {
          await new Promise<void>((resolve) => {
            this.wakeUp = resolve;
          });
          this.wakeUp = null;
          continue;
        }
        const batch = await this.options.consumer.fetch({
          max_messages: Math.min(this.demand, MAX_FETCH),
          expires: this.options.expiresMs,
        });
        this.batch = batch;
        if (this.stopped) void batch.close();
        for await (const msg of batch) {
          // Cancelled: the rest are left unacknowledged (the fetch was closed and ends by itself).
          if (this.stopped) continue;
          this.demand--;
          this.sink.next(toMessage(msg));
        }
        this.batch = null;
      }
    } catch (err) {
      if (this.stopped) return;
      this.stopped = true;
      this.sink.error(err);
    }
  }
}

/** The most messages one fetch asks for; a window without limit (`Infinity`) fetches in batches of this. */
const MAX_FETCH = 10_000;
