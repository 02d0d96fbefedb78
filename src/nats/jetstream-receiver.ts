import { defaultFailurePolicy } from '../default-failure-policy';
import type { ReceiverSink, SettledListener, Settlement } from '../receiver';
import { ClosableReceiver } from '../receivers/closable-receiver';
import { type FailedAction, failedActionOption } from '../receivers/failed-action';
import { LagPoll } from '../receivers/lag-poll';
import { PullSession } from '../receivers/pull-session';
import {
  type ResolvedTransportHealth,
  TRANSPORT_HEALTH_OPTIONS,
  type TransportFault,
  type TransportHealthOptions,
  transportHealthOptions,
} from '../transport-fault';
import type { TransportLag } from '../transport-lag';
import { describe, durationOption, functionOption, integerOption, optionsObject } from '../validate';
import { HeldMessages, inProgressEveryMs } from './held-messages';
import type { JetStreamConsumer, JetStreamFetch } from './jetstream-client';
import { type JetStreamMessage, toMessage } from './message';

/**
 * What a `failed` settlement does — a handler failed and nothing dealt with it (no failure policy, or one
 * without a `deadLetter` gave up); see `FailedAction`: `'redeliver'` naks it, so it is redelivered at
 * once; `{ redeliverAfterMs }` naks it with that delay; `'ack'` acknowledges it; `'term'` tells the
 * server never to redeliver it. Redelivery stops at the consumer's `max_deliver` (unlimited by
 * default). A `dead-lettered` message is always acknowledged.
 */
export type JetStreamFailedAction =
  | FailedAction
  | 'term'
  | {
      /** Nak with this delay, in ms: redelivered once it has passed. Integer ≥ 0. */
      redeliverAfterMs: number;
    };

/** Options of `fromJetStream`. Invalid values throw a `TypeError` naming the option. */
export interface JetStreamOptions extends TransportHealthOptions {
  /**
   * A pull consumer (`await jetstream(nc).consumers.get(stream, durable)`), created with
   * `ack_policy: AckPolicy.Explicit`. Its `ack_wait` is how long a dead process's messages stay
   * unacknowledged before they are redelivered: a live process keeps every message it holds (running,
   * waiting behind its key, parked) in progress every third of it, so none is redelivered while it is
   * held. Its `max_ack_pending` caps all its processes together.
   */
  consumer: JetStreamConsumer;
  /**
   * How long one wait of the broker for messages (a fetch) lasts before it is renewed. Integer ≥ 1000 ms
   * (the client's minimum). Default 5000.
   */
  maxWaitMs?: number;
  /** How long `close()` waits for delivered messages to settle. Integer ≥ 0 ms. Default 30000. */
  closeTimeoutMs?: number;
  /**
   * How often the receiver asks the server for the consumer's info (its pending counts), which the
   * dispatcher's stats show as `transportLag`: the figures there are at most this old. Integer ≥ 1 ms.
   * Default 5000.
   */
  lagIntervalMs?: number;
  /** What a `failed` settlement does: `'redeliver'`, `{ redeliverAfterMs }`, `'ack'` or `'term'`. Default `'redeliver'`. */
  onFailed?: JetStreamFailedAction;
  /** Told each message's outcome after it was acknowledged (`ack`, `nak` or `term` sent). */
  onSettled?: SettledListener<JetStreamMessage>;
  /**
   * Told each failure the receiver survives and retries, all of them `'fetch'`: a fetch that failed
   * (the consumer or its stream missing, missed heartbeats, no JetStream answering), and a fetch still
   * without an answer twice `maxWaitMs` after it began — how a lost server shows, as the client waits
   * for its connection without a word (the connection's own events stay the application's:
   * `nc.status()`). A throw from it is ignored. Default: none (the failures are still counted in
   * `DispatchStats`).
   */
  onTransportError?: (fault: TransportFault) => void;
  /**
   * How long fetches may keep failing, with no answer from the server in between, before the receiver
   * gives up and errors the output with a `TransportUnreachableError`. Integer ≥ 1 ms. Default 60,000.
   */
  maxUnreachableMs?: number;
}

interface ResolvedOptions {
  consumer: JetStreamConsumer;
  maxWaitMs: number;
  closeTimeoutMs: number;
  lagIntervalMs: number;
  fail: (message: JetStreamMessage) => void;
  onSettled: SettledListener<JetStreamMessage> | undefined;
  health: ResolvedTransportHealth;
}

/**
 * A receiver over a JetStream pull consumer. Each fetch asks for exactly the free window, one fetch at a
 * time (so messages are delivered in the order the server sends them); each message is acknowledged
 * after its handler completed (or its dead letter took it), and a failed one is handled per `onFailed`.
 * Fetch failures are retried and reported through `onTransportError`. `close()` stops fetching, lets
 * delivered messages settle and completes.
 */
export function fromJetStream(options: JetStreamOptions): ClosableReceiver<JetStreamMessage> {
  const resolved = resolveOptions(options);
  return new ClosableReceiver(
    (sink) => new JetStreamSession(resolved, sink),
    resolved.closeTimeoutMs,
    RECEIVER,
  );
}

function resolveOptions(options: JetStreamOptions): ResolvedOptions {
  const owner = 'fromJetStream';
  optionsObject(owner, options, [
    'consumer',
    'maxWaitMs',
    'closeTimeoutMs',
    'lagIntervalMs',
    'onFailed',
    'onSettled',
    ...TRANSPORT_HEALTH_OPTIONS,
  ] satisfies Array<keyof JetStreamOptions>);
  const consumer = options.consumer as Partial<JetStreamConsumer> | undefined;
  if (
    consumer === null ||
    typeof consumer !== 'object' ||
    typeof consumer.fetch !== 'function' ||
    typeof consumer.info !== 'function'
  ) {
    throw new TypeError(
      `${owner}: expected \`consumer\` to be a JetStream pull consumer, got ${describe(consumer)}`,
    );
  }
  return {
    consumer: options.consumer,
    maxWaitMs: durationOption(owner, 'maxWaitMs', options.maxWaitMs, 5000, 1000),
    closeTimeoutMs: durationOption(owner, 'closeTimeoutMs', options.closeTimeoutMs, 30_000, 0),
    lagIntervalMs: durationOption(owner, 'lagIntervalMs', options.lagIntervalMs, 5000, 1),
    fail: failedAction(owner, options.onFailed),
    onSettled:
      options.onSettled === undefined ? undefined : functionOption(owner, 'onSettled', options.onSettled),
    health: transportHealthOptions(owner, options),
  };
}

function failedAction(owner: string, action: unknown): (message: JetStreamMessage) => void {
  if (action !== null && typeof action === 'object') {
    const ms = integerOption(
      owner,
      'onFailed.redeliverAfterMs',
      (action as Record<string, unknown>).redeliverAfterMs,
      -1,
      0,
    );
    if (ms >= 0) return (m) => m.msg.nak(ms);
  }
  const name = failedActionOption(owner, action, ['redeliver', 'ack', 'term'], '{ redeliverAfterMs }');
  if (name === 'ack') return (m) => m.msg.ack();
  if (name === 'term') return (m) => m.msg.term();
  return (m) => m.msg.nak();
}

/** One subscription: a loop of fetches sized to the demand, plus acknowledgements. */
class JetStreamSession extends PullSession<JetStreamMessage> {
  /** A consumer that must keep running: with no \`failurePolicy\`, a failed message is retried in its key's mailbox. */
  readonly defaultFailurePolicy = defaultFailurePolicy<JetStreamMessage>();

  /** The fetch under way, closed when intake stops. */
  private batch: JetStreamFetch | null = null;
  /** Delivered and not yet settled: kept in progress on the server. */
  private readonly held = new HeldMessages((err) => this.transportFailed('commit', err));
  /** The consumer's pending counts, asked every `lagIntervalMs`. */
  private readonly lag: LagPoll;

  constructor(
    private readonly options: ResolvedOptions,
    sink: ReceiverSink<JetStreamMessage>,
  ) {
    super(sink, options.onSettled, { ...options.health, receiver: RECEIVER });
    this.lag = new LagPoll(() => this.readLag(), options.lagIntervalMs);
    this.lag.start();
    this.runLoop(() => this.fetchLoop());
  }

  transportLag(): readonly TransportLag[] {
    return this.lag.latest;
  }

  /** The consumer's messages not yet delivered plus those delivered and not acknowledged. */
  private async readLag(): Promise<TransportLag[]> {
    const info = await this.options.consumer.info();
    return [
      {
        transport: 'jetstream',
        source: info.stream_name,
        partition: null,
        consumer: info.name,
        lag: info.num_pending + info.num_ack_pending,
        committed: String(info.ack_floor.stream_seq),
        at: Date.now(),
      },
    ];
  }

  /** Where a message came from, for errors about it: `subject 'orders.created' stream 'ORDERS' sequence 42`. */
  describe(message: JetStreamMessage): string {
    return `subject '${message.subject}' stream '${message.msg.info.stream}' sequence ${message.seq}`;
  }

  protected override acknowledge(message: JetStreamMessage, outcome: Settlement): void {
    this.held.delete(message);
    // Done, or dead-lettered (its dead letter is its handling): acknowledged either way.
    if (outcome === 'failed') this.options.fail(message);
    else message.msg.ack();
  }

  protected override stopFetching(): void {
    // Messages the fetch still brings are not delivered: unacknowledged, they come again after ack_wait.
    // Acknowledgements go on, on the application's connection.
    void this.batch?.close();
  }

  /** Given back unsettled at a graceful close: no longer kept in progress, so it comes back after `ack_wait`. */
  protected override discard(matches: (message: JetStreamMessage) => boolean): JetStreamMessage[] {
    const discarded = super.discard(matches);
    for (const message of discarded) this.held.delete(message);
    return discarded;
  }

  protected override close(): void {
    this.lag.stop();
    this.held.clear();
  }

  /** Keeps held messages in progress at the pace of the consumer's `ack_wait`. */
  private async keepHeldInProgress(): Promise<void> {
    const info = await this.options.consumer.info(true);
    const ackWaitNs = info.config.ack_wait ?? DEFAULT_ACK_WAIT_NS;
    // Not once the session ended while the info was read: nothing would stop it.
    if (!this.ended) this.held.keepInProgress(inProgressEveryMs(ackWaitNs / 1_000_000));
  }

  /** Fetches while there is demand; a failed fetch is reported and tried again. */
  private async fetchLoop(): Promise<void> {
    await this.keepHeldInProgress();
    while (await this.whenDemand()) {
      try {
        await this.fetch();
      } catch (err) {
        if (this.stopped) return;
        if (FATAL.has((err as { name?: unknown } | null)?.name)) throw err;
        this.transportFailed('fetch', err);
        await this.wait(RETRY_MS);
      }
    }
  }

  /** One fetch of what is requested (it only grows while a fetch runs), delivered as it comes. */
  private async fetch(): Promise<void> {
    const { consumer, maxWaitMs } = this.options;
    const batch = await consumer.fetch({
      max_messages: Math.min(this.demand, MAX_FETCH),
      expires: maxWaitMs,
    });
    this.batch = batch;
    // Intake stopped while the fetch was being set up: close it here, as `stopFetching` had none to close.
    if (this.stopped) void batch.close();
    const overdue = this.watchOverdue(Date.now());
    try {
      for await (const msg of batch) {
        this.transportRecovered();
        // Still held here: the server did not hear of it within `ack_wait` (the event loop was blocked,
        // the connection down). The copy would run it twice, after later messages of its key.
        if (this.held.has(msg.seq)) continue;
        const message = toMessage(msg);
        // Held before the delivery, which may settle it at once.
        this.held.add(message);
        // Refused once intake stopped; the closed fetch then ends by itself.
        if (!this.deliver(message)) this.held.delete(message);
      }
      this.transportRecovered();
    } finally {
      clearInterval(overdue);
      this.batch = null;
    }
  }

  /**
   * The server ends a fetch after `maxWaitMs`. While the connection is down the client holds the fetch
   * open and says nothing, so a fetch open for twice that long is reported, every `maxWaitMs` until it ends.
   */
  private watchOverdue(since: number): ReturnType<typeof setInterval> {
    const { maxWaitMs } = this.options;
    return setInterval(() => {
      const open = Date.now() - since;
      if (open < 2 * maxWaitMs) return;
      this.transportFailed(
        'fetch',
        new Error(
          `${RECEIVER}: no answer from the server to a fetch for ${open} ms (it ends after \`maxWaitMs\`, ` +
            `${maxWaitMs} ms): the connection is down or the server is unreachable`,
        ),
      );
    }, maxWaitMs);
  }
}

/** How errors and faults name this receiver. */
const RECEIVER = 'fromJetStream()';

/**
 * Fetch failures not worth trying again: the application closed or is draining the connection, or the
 * fetch itself was wrong.
 */
const FATAL = new Set<unknown>([
  'ClosedConnectionError',
  'DrainingConnectionError',
  'InvalidArgumentError',
  'InvalidOperationError',
]);

/** The server's `ack_wait` for a consumer created without one: 30 s. */
const DEFAULT_ACK_WAIT_NS = 30_000_000_000;

/** How long the receiver waits before it tries a failed fetch again. */
const RETRY_MS = 500;

/** The most messages one fetch asks for; a window without limit (`Infinity`) fetches in batches of this. */
const MAX_FETCH = 10_000;
