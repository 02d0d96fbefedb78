import type { ReceiverSink, SettledListener, Settlement } from '../receiver';
import { ClosableReceiver } from '../receivers/closable-receiver';
import { type FailedAction, failedActionOption } from '../receivers/failed-action';
import { PullSession } from '../receivers/pull-session';
import { describe, durationOption, functionOption, integerOption, optionsObject } from '../validate';
import type { JetStreamConsumer, JetStreamFetch } from './jetstream-client';
import { type JetStreamMessage, toMessage } from './message';

/**
 * What a `failed` settlement does (see `FailedAction`): `'redeliver'` naks it, so it is redelivered at
 * once; `{ redeliverAfterMs }` naks it with that delay; `'ack'` acknowledges it (the failure policy has
 * dealt with it); `'term'` tells the server never to redeliver it. Redelivery stops at the consumer's
 * `max_deliver`. The earlier names `'nak'` and `{ nakDelayMs }` are still accepted.
 */
export type JetStreamFailedAction =
  | FailedAction
  | 'term'
  | {
      /** Nak with this delay, in ms: redelivered once it has passed. Integer ≥ 0. */
      redeliverAfterMs: number;
    }
  | 'nak'
  | {
      /** The earlier name of `redeliverAfterMs`. */
      nakDelayMs: number;
    };

/** Options of `fromJetStream`. Invalid values throw a `TypeError` naming the option. */
export interface JetStreamOptions {
  /**
   * A pull consumer (`await jetstream(nc).consumers.get(stream, durable)`), created with
   * `ack_policy: AckPolicy.Explicit`. Its `ack_wait` is how long a dead process's messages stay
   * unacknowledged before they are redelivered; its `max_ack_pending` caps all its processes together.
   */
  consumer: JetStreamConsumer;
  /**
   * How long one fetch waits for its messages before it is renewed. Integer ≥ 1000 ms (the client's
   * minimum). Default 5000.
   */
  expiresMs?: number;
  /** How long `close()` waits for delivered messages to settle. Integer ≥ 0 ms. Default 30000. */
  closeTimeoutMs?: number;
  /** What a `failed` settlement does: `'redeliver'`, `{ redeliverAfterMs }`, `'ack'` or `'term'`. Default `'redeliver'`. */
  onFailed?: JetStreamFailedAction;
  /** Told each message's outcome after it was acknowledged (`ack`, `nak` or `term` sent). */
  onSettled?: SettledListener<JetStreamMessage>;
}

interface ResolvedOptions {
  consumer: JetStreamConsumer;
  expiresMs: number;
  closeTimeoutMs: number;
  fail: (message: JetStreamMessage) => void;
  onSettled: SettledListener<JetStreamMessage> | undefined;
}

/**
 * A receiver over a JetStream pull consumer. Each fetch asks for exactly the free window, one fetch at a
 * time (so messages are delivered in the order the server sends them); each message is acknowledged
 * after its handler completed, and a failed one is handled per `onFailed`. `close()` stops fetching,
 * lets delivered messages settle and completes.
 */
export function fromJetStream(options: JetStreamOptions): ClosableReceiver<JetStreamMessage> {
  const resolved = resolveOptions(options);
  return new ClosableReceiver(
    (sink) => new JetStreamSession(resolved, sink),
    resolved.closeTimeoutMs,
    'fromJetStream()',
  );
}

function resolveOptions(options: JetStreamOptions): ResolvedOptions {
  const owner = 'fromJetStream';
  optionsObject(owner, options, [
    'consumer',
    'expiresMs',
    'closeTimeoutMs',
    'onFailed',
    'onSettled',
  ] satisfies Array<keyof JetStreamOptions>);
  const consumer = options.consumer as Partial<JetStreamConsumer> | undefined;
  if (consumer === null || typeof consumer !== 'object' || typeof consumer.fetch !== 'function') {
    throw new TypeError(
      `${owner}: expected \`consumer\` to be a JetStream pull consumer, got ${describe(consumer)}`,
    );
  }
  return {
    consumer: options.consumer,
    expiresMs: durationOption(owner, 'expiresMs', options.expiresMs, 5000, 1000),
    closeTimeoutMs: durationOption(owner, 'closeTimeoutMs', options.closeTimeoutMs, 30_000, 0),
    fail: failedAction(owner, options.onFailed),
    onSettled:
      options.onSettled === undefined ? undefined : functionOption(owner, 'onSettled', options.onSettled),
  };
}

function failedAction(owner: string, action: unknown): (message: JetStreamMessage) => void {
  if (action !== null && typeof action === 'object') {
    const delay = 'nakDelayMs' in action ? 'nakDelayMs' : 'redeliverAfterMs';
    const ms = integerOption(owner, `onFailed.${delay}`, (action as Record<string, unknown>)[delay], -1, 0);
    if (ms >= 0) return (m) => m.msg.nak(ms);
  }
  const name = failedActionOption(
    owner,
    action,
    ['redeliver', 'ack', 'term'],
    { nak: 'redeliver' },
    '{ redeliverAfterMs }',
  );
  if (name === 'ack') return (m) => m.msg.ack();
  if (name === 'term') return (m) => m.msg.term();
  return (m) => m.msg.nak();
}

/** One subscription: a loop of fetches sized to the demand, plus acknowledgements. */
class JetStreamSession extends PullSession<JetStreamMessage> {
  /** The fetch under way, closed when intake stops. */
  private batch: JetStreamFetch | null = null;

  constructor(
    private readonly options: ResolvedOptions,
    sink: ReceiverSink<JetStreamMessage>,
  ) {
    super(sink, options.onSettled);
    this.runLoop(() => this.fetchLoop());
  }

  protected override acknowledge(message: JetStreamMessage, outcome: Settlement): void {
    if (outcome === 'done') message.msg.ack();
    else this.options.fail(message);
  }

  protected override stopFetching(): void {
    // Messages the fetch still brings are not delivered: unacknowledged, they come again after ack_wait.
    void this.batch?.close();
  }

  /** Fetches what is requested (it only grows while a fetch runs), one fetch at a time. */
  private async fetchLoop(): Promise<void> {
    while (await this.whenDemand()) {
      const batch = await this.options.consumer.fetch({
        max_messages: Math.min(this.demand, MAX_FETCH),
        expires: this.options.expiresMs,
      });
      this.batch = batch;
      // Intake stopped while the fetch was being set up: close it here, as `stopFetching` had none to close.
      if (this.stopped) void batch.close();
      // Refused once intake stopped; the closed fetch then ends by itself.
      for await (const msg of batch) this.deliver(toMessage(msg));
      this.batch = null;
    }
  }
}

/** The most messages one fetch asks for; a window without limit (`Infinity`) fetches in batches of this. */
const MAX_FETCH = 10_000;
