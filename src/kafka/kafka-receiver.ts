import { defaultFailurePolicy } from '../default-failure-policy';
import {
  openReceiver,
  Receiver,
  type ReceiverSession,
  type ReceiverSink,
  type SettledListener,
  type Settlement,
} from '../receiver';
import { type FailedAction, failedActionOption } from '../receivers/failed-action';
import { NOTHING, PullSession } from '../receivers/pull-session';
import {
  type ResolvedTransportHealth,
  TRANSPORT_HEALTH_OPTIONS,
  type TransportFault,
  type TransportHealthOptions,
  type TransportOperation,
  transportHealthOptions,
} from '../transport-fault';
import type { TransportLag } from '../transport-lag';
import { durationOption, functionOption, integerOption, optionsObject } from '../validate';
import type {
  CommittedOffset,
  KafkaConsumerAdapter,
  KafkaConsumerListener,
  TopicPartition,
  TopicPartitionOffset,
} from './adapter';
import { FetchHold } from './fetch-hold';
import { DEFAULT_METADATA_MAX_BYTES } from './finished-offsets';
import type { KafkaMessage, KafkaRecord } from './message';
import { PartitionTracker, type TrackedKafkaMessage } from './partition-tracker';
import { ReadyPartitions } from './ready-partitions';
import { keepsForStarving } from './starving-share';

/**
 * Least time between the starts of commits that `commitEveryMessages` triggers. At tens of thousands of
 * messages a second the count comes round every few ms; each commit is a broker request (and its
 * metadata an encoding) on the same cores as the handlers.
 */
const MIN_COMMIT_GAP_MS = 10;

/** Tuning of a `KafkaReceiver`. Invalid values throw a `TypeError` naming the option. */
export interface KafkaReceiverOptions extends TransportHealthOptions {
  /**
   * Finished positions are committed at most this long after a message finishes, in ms. Integer ≥ 1.
   * Default 1000. Whatever finished since the last commit is handled again after a crash.
   */
  commitIntervalMs?: number;
  /**
   * Finished positions are also committed once this many messages have finished since the last
   * commit, whichever of the two comes first. Integer ≥ 1. Default 200. One commit is in flight at a
   * time, and commits this triggers start at least 10 ms apart (at high rates they would otherwise
   * follow one another back to back). A smaller number means fewer messages handled again after a
   * crash (down to what finishes in those 10 ms), and more commit requests.
   */
  commitEveryMessages?: number;
  /**
   * Most bytes of commit metadata per partition, where the receiver records which offsets above the
   * committed one already finished, so that a new owner (after a restart or a rebalance) skips them.
   * Integer ≥ 0; 0 commits plain offsets. Default 4096, the broker's default
   * `offset.metadata.max.bytes` (lower it to the broker's setting when that is lower: a commit with
   * longer metadata fails). When the finished offsets do not fit, the lowest ones that fit are recorded.
   * Metadata read back on assignment that is longer than this counts as recording nothing (its
   * partition's messages above the committed offset are all handled again).
   */
  commitMetadataMaxBytes?: number;
  /**
   * How long a revoke waits for the partition's running messages before committing and letting the
   * partition go, in ms. Integer ≥ 0. Default 5000. Messages still running then are handled again by
   * the new owner (their key runs in two places for that moment).
   */
  revokeTimeoutMs?: number;
  /** How long `close()` waits for running messages before committing and leaving, in ms. Integer ≥ 0. Default 30000. */
  closeTimeoutMs?: number;
  /**
   * Fetched messages a partition buffers beyond what was requested before its fetching pauses; it
   * resumes once the buffer is down to half. Integer ≥ 1. Default 1000; 150 with `fromKafka`
   * (kafkajs keeps more per record: see the Kafka guide's Memory section). One more fetch response per
   * partition may land while pausing: its size follows from this (32 bytes a record, 4 KiB–1 MiB,
   * unless the consumer sets `maxBytesPerPartition`), except for a kafkajs consumer given to
   * `fromKafka` as `consumer`, whose own `maxBytesPerPartition` (1 MiB by default) it is.
   */
  prefetch?: number;
  /**
   * What a `failed` settlement does — a handler failed and nothing dealt with it (no failure policy, or
   * one without a `deadLetter` gave up); see `FailedAction`. Kafka cannot deliver one record again, so
   * `'redeliver'` never counts the message as finished: commits stop below it for the rest of the
   * assignment, and the partition is replayed from it (it and everything after it) on the next restart
   * or rebalance; `'ack'` counts it as finished, so commits go past it and it is never delivered again.
   * A `dead-lettered` message (the failure policy's `deadLetter` took it) always counts as finished.
   * Default `'redeliver'`.
   */
  onFailed?: FailedAction;
  /** Told each message's outcome once it is recorded for the next commit. */
  onSettled?: SettledListener<KafkaMessage>;
  /**
   * Told each failure the receiver survives and retries: a failed commit, or read of the committed
   * offsets (`'commit'`); a failed fetch (`'fetch'`); a failed group heartbeat (`'heartbeat'`); the
   * client losing the broker and restarting (`'connection'`); see docs/transports.md. A throw from it
   * is ignored. Default: none (the failures are still counted in `DispatchStats`).
   */
  onTransportError?: (fault: TransportFault) => void;
  /**
   * How long the broker may keep failing, with no fetch, commit or heartbeat succeeding in between,
   * before the receiver gives up and errors the output with a `TransportUnreachableError`. Integer ≥ 1
   * ms. Default 60,000. At start-up too: a start that an outage fails is a `'connection'` fault and is
   * tried again a second later, until the consumer joins or this long has passed since the first one.
   */
  maxUnreachableMs?: number;
}

interface ResolvedOptions {
  commitIntervalMs: number;
  commitEveryMessages: number;
  commitMetadataMaxBytes: number;
  revokeTimeoutMs: number;
  closeTimeoutMs: number;
  prefetch: number;
  onFailed: FailedAction;
  onSettled: SettledListener<KafkaMessage> | undefined;
  health: ResolvedTransportHealth;
}

/** Every option of `KafkaReceiver`; any other key is refused. */
export const KAFKA_RECEIVER_OPTIONS = [
  'commitIntervalMs',
  'commitEveryMessages',
  'commitMetadataMaxBytes',
  'revokeTimeoutMs',
  'closeTimeoutMs',
  'prefetch',
  'onFailed',
  'onSettled',
  ...TRANSPORT_HEALTH_OPTIONS,
] as const satisfies ReadonlyArray<keyof KafkaReceiverOptions>;

function resolveOptions(options: KafkaReceiverOptions): ResolvedOptions {
  optionsObject('KafkaReceiver', options, KAFKA_RECEIVER_OPTIONS);
  return {
    commitIntervalMs: durationOption('KafkaReceiver', 'commitIntervalMs', options.commitIntervalMs, 1000, 1),
    commitEveryMessages: integerOption(
      'KafkaReceiver',
      'commitEveryMessages',
      options.commitEveryMessages,
      200,
      1,
    ),
    commitMetadataMaxBytes: integerOption(
      'KafkaReceiver',
      'commitMetadataMaxBytes',
      options.commitMetadataMaxBytes,
      DEFAULT_METADATA_MAX_BYTES,
      0,
    ),
    revokeTimeoutMs: durationOption('KafkaReceiver', 'revokeTimeoutMs', options.revokeTimeoutMs, 5000, 0),
    closeTimeoutMs: durationOption('KafkaReceiver', 'closeTimeoutMs', options.closeTimeoutMs, 30000, 0),
    prefetch: integerOption('KafkaReceiver', 'prefetch', options.prefetch, 1000, 1),
    onFailed: failedActionOption('KafkaReceiver', options.onFailed, ['redeliver', 'ack']),
    onSettled:
      options.onSettled === undefined
        ? undefined
        : functionOption('KafkaReceiver', 'onSettled', options.onSettled),
    health: transportHealthOptions('KafkaReceiver', options),
  };
}

/**
 * A pullable receiver over a Kafka consumer-group member (see `KafkaConsumerAdapter`; `fromKafka` for
 * kafkajs). Delivers at most what `keyedDispatch` requested, pausing partitions whose buffer is full;
 * commits per partition only up to the highest contiguous finished offset — after a number of
 * finished messages or an interval, on revoke and on close — with metadata naming the offsets above it
 * that finished too, which a new owner skips. At-least-once: whatever was not committed is delivered
 * again after a rebalance or a restart. One subscription per receiver (a consumer joins its group once).
 */
export class KafkaReceiver extends Receiver<KafkaMessage> {
  readonly #options: ResolvedOptions;
  /** The one subscription; null before it. */
  #session: KafkaSession | null = null;
  /** `close()` before any subscription: the consumer leaves without having joined. */
  #closedUnopened: Promise<void> | null = null;

  readonly #adapter: KafkaConsumerAdapter;
  readonly #name: string;

  /** `name`: how errors and transport faults name this receiver (`fromKafka()`); `KafkaReceiver` by default. */

  constructor(adapter: KafkaConsumerAdapter, options: KafkaReceiverOptions = {}, name = 'KafkaReceiver') {
    super(name);
    this.#adapter = adapter;
    this.#name = name;
    this.#options = resolveOptions(options);
  }

  /** Opens the receiver's session and starts the consumer; a receiver is subscribed once (a second time errors). */
  [openReceiver](sink: ReceiverSink<KafkaMessage>): ReceiverSession<KafkaMessage> {
    if (this.#session !== null || this.#closedUnopened !== null) {
      const error = new Error(
        'KafkaReceiver: a receiver is subscribed once (its consumer joins its group once)',
      );
      queueMicrotask(() => sink.error(error));
      return { request() {}, settle() {}, cancel() {} };
    }
    this.#session = new KafkaSession(this.#adapter, sink, this.#options, this.#name);
    this.#session.start();
    return this.#session;
  }

  /** Commits the finished positions now. Resolves when the commit is done (no-op when not subscribed). */
  async commit(): Promise<void> {
    await this.#session?.commitAll();
  }

  /**
   * Graceful stop: stops intake (queued messages are dropped unacknowledged), waits up to
   * `closeTimeoutMs` for running messages, completes the receiver's output, commits and leaves the
   * group. Resolves once the consumer is disconnected. Safe to call more than once, and after the
   * subscription has ended.
   */
  close(): Promise<void> {
    if (this.#session !== null) return this.#session.closeGracefully(this.#options.closeTimeoutMs);
    this.#closedUnopened ??= this.#adapter.close();
    return this.#closedUnopened;
  }
}

/** The pause before starting the consumer again after an outage failed its start. */
const START_RETRY_MS = 1000;

/** Tries of the last commit on close, and the pause between them. */
const FINAL_COMMIT_ATTEMPTS = 5;
const FINAL_COMMIT_BACKOFF_MS = 500;

/** One subscription: partition trackers feeding the demand, and commits. */
class KafkaSession extends PullSession<KafkaMessage> implements KafkaConsumerListener {
  /** A consumer that must keep running: with no \`failurePolicy\`, a failed message is retried in its key's mailbox. */
  readonly defaultFailurePolicy = defaultFailurePolicy<KafkaMessage>();

  /** Trackers of the current assignment by `topic:partition`. */
  private readonly live = new Map<string, PartitionTracker>();
  /** Revoked trackers still waiting for running messages before their final commit. */
  private readonly draining = new Set<PartitionTracker>();
  /** Trackers with buffered messages, served fewest in flight first, so each keeps a share of the window. */
  private readonly ready = new ReadyPartitions();
  /** Highest position (and its metadata) this member committed per `topic:partition`: commits never go backwards. */
  private readonly committed = new Map<string, { at: bigint; metadata: string | undefined }>();
  /** The commit in flight: one at a time, so a later position never lands before an earlier one. */
  private committing: Promise<boolean> | null = null;
  /** The commit that runs after the one in flight; every request meanwhile joins it. */
  private nextCommit: Promise<boolean> | null = null;
  /** Messages finished since the last commit began. */
  private finishedSinceCommit = 0;
  private timer: ReturnType<typeof setInterval> | null = null;
  /** When the last commit request was sent (`performance.now()`). */
  private lastCommitAt = Number.NEGATIVE_INFINITY;
  /** A count-triggered commit waiting out `MIN_COMMIT_GAP_MS`. */
  private gapTimer: ReturnType<typeof setTimeout> | null = null;
  /** The consumer is closing: its last commit is under way, and no other starts. */
  private closingConsumer = false;
  /** Delivered messages of every partition not yet settled or discarded: with `demand`, the window. */
  private inFlight = 0;
  /** Whether a full partition holds fetching (see `batch`). */
  private readonly fetchHold = new FetchHold();
  /** The consumer started (its adapter joined the group) or was given an assignment: it has joined. */
  private joined = false;

  constructor(
    private readonly adapter: KafkaConsumerAdapter,
    sink: ReceiverSink<KafkaMessage>,
    private readonly options: ResolvedOptions,
    receiver: string,
  ) {
    super(sink, options.onSettled, { ...options.health, receiver });
  }

  start(): void {
    this.timer = setInterval(() => void this.commitAll(), this.options.commitIntervalMs);
    this.timer.unref?.();
    void this.startConsumer();
  }

  /**
   * Starts the consumer. A start that an outage fails (the adapter's `isOutage`) is a fault, and the
   * consumer starts again after `START_RETRY_MS`: a process started while the broker restarts waits for
   * it, for as long as `maxUnreachableMs` allows, instead of ending on the client's first give-up.
   */
  private async startConsumer(): Promise<void> {
    while (!this.closingConsumer) {
      try {
        await this.adapter.start(this);
        this.joined = true;
        this.transportRecovered();
        return;
      } catch (error) {
        if (this.closingConsumer) return;
        if (!this.adapter.isOutage?.(error)) {
          this.failed(error);
          return;
        }
        this.transportFailed('connection', error);
      }
      await new Promise((resolve) => setTimeout(resolve, START_RETRY_MS));
    }
  }

  // PullSession

  override notReadyBecause(): string | undefined {
    return super.notReadyBecause() ?? (this.joined ? undefined : 'the consumer has not joined its group yet');
  }

  /**
   * The next buffered message, of the partition with the fewest in flight, unless the free places are
   * kept for starving partitions (`keepsForStarving`).
   */
  protected override take(): KafkaMessage | typeof NOTHING {
    for (let tracker = this.ready.next(); tracker !== undefined; tracker = this.ready.next()) {
      // A held partition is ready again when its parked messages have entered the window.
      if (tracker.revoked || tracker.parked > 0) continue;
      if (keepsForStarving(tracker, this.live, this.inFlight + this.demand)) {
        this.ready.add(tracker);
        return NOTHING;
      }
      const message = tracker.buffer.shift();
      tracker.inFlight++;
      this.inFlight++;
      if (tracker.buffer.size > 0) this.ready.add(tracker);
      this.resumeIfRoom(tracker);
      return message;
    }
    return NOTHING;
  }

  /**
   * A message of a hot key had to park: its partition is held — nothing more of it is delivered, and
   * its fetching pauses — so the parking area fills no further with it while the other partitions flow.
   */
  override parked(message: KafkaMessage): void {
    const tracker = (message as TrackedKafkaMessage).tracker;
    if (tracker.parked++ > 0 || tracker.revoked) return;
    // Held, it drains at the hot key's pace: fetching no longer waits for it (see `batch`).
    tracker.releaseRoom();
    if (!tracker.paused) {
      tracker.paused = true;
      this.adapter.pause([tracker]);
    }
  }

  /** A parked message entered the window: with the last of its partition's, the partition flows again. */
  override unparked(message: KafkaMessage): void {
    const tracker = (message as TrackedKafkaMessage).tracker;
    if (--tracker.parked > 0 || tracker.revoked) return;
    this.resumeIfRoom(tracker);
    if (tracker.buffer.size > 0 && !this.ready.has(tracker)) {
      this.ready.add(tracker);
      this.drain();
    }
  }

  /** Resumes fetching a paused partition once it is not held and its buffer has room again. */
  private resumeIfRoom(tracker: PartitionTracker): void {
    if (tracker.buffer.size > this.options.prefetch >> 1) return;
    const resumes = tracker.paused && tracker.parked === 0;
    // A held fetch goes on once a partition can be fetched again, or this buffer has room (even while a
    // parked hot key still holds the partition).
    if (resumes || tracker.room !== null) this.fetchHold.release();
    if (resumes) {
      tracker.paused = false;
      this.adapter.resume([tracker]);
    }
  }

  /** Where a message came from, for errors about it: `topic 'orders' partition 3 offset 1234`. */
  describe(message: KafkaMessage): string {
    return `topic '${message.topic}' partition ${message.partition} offset ${message.offset}`;
  }

  protected override acknowledge(message: KafkaMessage, outcome: Settlement): void {
    const m = message as TrackedKafkaMessage;
    // A message not finished holds the partition's commit below it until it is redelivered.
    if (outcome !== 'failed' || this.options.onFailed === 'ack') {
      m.tracker.finish(m.seq);
      this.countFinished();
    } else m.tracker.fail(m.seq);
    this.release(m.tracker);
  }

  /** Discarded messages are released from their trackers, so a revoke does not wait for them. */
  protected override discard(matches: (message: KafkaMessage) => boolean): KafkaMessage[] {
    const discarded = super.discard(matches);
    for (const m of discarded) this.release((m as TrackedKafkaMessage).tracker);
    return discarded;
  }

  /** One of the tracker's delivered messages settled or was discarded. */
  private release(tracker: PartitionTracker): void {
    tracker.release();
    this.inFlight--;
    this.ready.inFlightChanged(tracker);
  }

  /**
   * Stops delivering and fetching; the consumer stays in its group and goes on committing what settles
   * (a graceful stop drains then closes). The messages delivered stay in the dispatcher: a graceful
   * close takes back the queued ones itself, a drain runs them.
   */
  protected override stopFetching(): void {
    const trackers = [...this.live.values()];
    for (const tracker of trackers) {
      tracker.revoked = true;
      tracker.buffer.clear();
      tracker.releaseRoom();
    }
    this.ready.clear();
    if (trackers.length > 0) this.adapter.pause(trackers);
  }

  /** Commits what finished (after a graceful close, everything that settled) and leaves the group. */
  protected override async close(): Promise<void> {
    this.closingConsumer = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    if (this.gapTimer !== null) clearTimeout(this.gapTimer);
    this.gapTimer = null;
    // The last commit fails while the group rebalances (say, another member leaves at the same moment);
    // it is tried again for a little while, so finished work is not handled twice by the next owner.
    for (let attempt = 1; !(await this.commitAll()) && attempt < FINAL_COMMIT_ATTEMPTS; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, FINAL_COMMIT_BACKOFF_MS));
    }
    await this.adapter.close();
  }

  // KafkaConsumerListener

  get prefetch(): number {
    return this.options.prefetch;
  }

  batch(
    topic: string,
    partition: number,
    records: readonly KafkaRecord[],
    behind = false,
    highWatermark?: string,
  ): Promise<void> | undefined {
    if (this.stopped || records.length === 0) return undefined;
    const id = `${topic}:${partition}`;
    let tracker = this.live.get(id);
    if (tracker === undefined) {
      tracker = new PartitionTracker(topic, partition);
      this.live.set(id, tracker);
    }
    tracker.behind = behind;
    if (highWatermark !== undefined) {
      tracker.highWatermark = highWatermark;
      tracker.highWatermarkAt = Date.now();
    }
    if (tracker.loading) {
      tracker.pending.push(records);
      if (pendingRecords(tracker) >= this.options.prefetch) this.fetchHold.loading(tracker);
    } else {
      this.admit(tracker, records);
      this.serve([tracker]);
    }
    return tracker.room?.promise;
  }

  /** Each assigned partition's lag, from its latest high watermark and its first unfinished offset. */
  transportLag(): TransportLag[] {
    const lags: TransportLag[] = [];
    for (const tracker of this.live.values()) {
      const lag = tracker.lag();
      if (lag === null) continue;
      const committed = this.committed.get(`${tracker.topic}:${tracker.partition}`);
      lags.push({
        transport: 'kafka',
        source: tracker.topic,
        partition: tracker.partition,
        consumer: null,
        lag,
        committed: committed === undefined ? null : String(committed.at),
        at: tracker.highWatermarkAt,
      });
    }
    return lags;
  }

  /** Buffers fetched records for delivery, settling at once those a previous owner finished. */
  private admit(tracker: PartitionTracker, records: readonly KafkaRecord[]): void {
    for (const record of records) {
      const seq = tracker.receive(record.offset);
      if (tracker.skips(record.offset)) {
        tracker.finish(seq);
        this.countFinished();
      } else {
        tracker.buffer.push(record, seq);
      }
    }
    if (tracker.buffer.size > 0 && !this.ready.has(tracker) && tracker.parked === 0) this.ready.add(tracker);
  }

  /**
   * Hands admitted records over, then pauses the partitions whose buffer is full. Records admitted
   * together are served together, so the free window goes to the partitions by the share rule, not
   * whole to the first admitted: a slow partition's messages hold their places long.
   */
  private serve(trackers: readonly PartitionTracker[]): void {
    this.drain();
    for (const tracker of trackers) {
      if (tracker.buffer.size >= this.options.prefetch) {
        // A partition held by a parked hot key drains at that key's pace: fetching does not wait for it.
        if (tracker.parked === 0) this.fetchHold.filled(tracker, this.live.values());
        if (!tracker.paused) {
          tracker.paused = true;
          this.adapter.pause([tracker]);
        }
      } else this.fetchHold.flowed(tracker);
    }
  }

  revoking(partitions?: readonly TopicPartition[]): Promise<void> {
    if (partitions === undefined) return this.revokeAll();
    const revoked: PartitionTracker[] = [];
    for (const { topic, partition } of partitions) {
      const id = `${topic}:${partition}`;
      const tracker = this.live.get(id);
      if (tracker === undefined) continue;
      this.live.delete(id);
      revoked.push(tracker);
    }
    return this.revoke(revoked);
  }

  assigned(partitions: readonly TopicPartition[], mode: 'all' | 'added' = 'all'): void {
    this.joined = true;
    // Eager rebalancing: whatever was tracked before is gone; fetching restarts at committed offsets.
    if (mode === 'all') void this.revokeAll();
    if (partitions.length === 0) return;
    if (this.stopped) {
      // Not fetched: nothing more is delivered, and they are someone else's after this member leaves.
      this.adapter.pause(partitions);
      return;
    }
    const trackers = partitions.map(({ topic, partition }) => {
      const tracker = new PartitionTracker(topic, partition);
      this.live.set(`${topic}:${partition}`, tracker);
      return tracker;
    });
    // Pauses are not carried across a rebalance: every new tracker starts unpaused.
    this.adapter.resume(partitions);
    if (this.options.commitMetadataMaxBytes > 0) void this.skipFinished(trackers);
  }

  /**
   * Reads the partitions' commit metadata back before delivering any of their messages, so those that
   * finished under the previous owner are skipped. Should the read fail, they are all delivered.
   */
  private async skipFinished(trackers: PartitionTracker[]): Promise<void> {
    for (const tracker of trackers) tracker.loading = true;
    let found: CommittedOffset[] = [];
    try {
      found = await this.adapter.committed(trackers);
      this.transportRecovered();
    } catch (error) {
      // At-least-once still holds: everything above the committed offset is handled again.
      this.transportFailed('commit', error);
    }
    const byId = new Map(found.map((c) => [`${c.topic}:${c.partition}`, c]));
    const admitted: PartitionTracker[] = [];
    for (const tracker of trackers) {
      tracker.loading = false;
      const pending = tracker.pending;
      tracker.pending = [];
      if (tracker.revoked || this.stopped) continue;
      const committed = byId.get(`${tracker.topic}:${tracker.partition}`);
      if (committed !== undefined) {
        tracker.inherit(committed.offset, committed.metadata, this.options.commitMetadataMaxBytes);
      }
      for (const records of pending) this.admit(tracker, records);
      if (pending.length > 0) admitted.push(tracker);
    }
    // Fetched meanwhile, every partition's first records are served together.
    this.serve(admitted);
  }

  failed(error: unknown): void {
    this.fail(error);
  }

  /** The adapter survived a failure of the client and retries (see `PullSession`). */
  override transportFailed(operation: TransportOperation, error: unknown): void {
    super.transportFailed(operation, error);
  }

  /** An operation of the client succeeded again. */
  override transportRecovered(): void {
    super.transportRecovered();
  }

  /** Revokes every tracked partition. */
  private revokeAll(): Promise<void> {
    const revoked = [...this.live.values()];
    this.live.clear();
    return this.revoke(revoked);
  }

  /**
   * Stops admitting these (no longer live) trackers, drops their queued messages, then drains and
   * commits them; resolves once they are committed.
   */
  private revoke(revoked: PartitionTracker[]): Promise<void> {
    if (revoked.length === 0) return Promise.resolve();
    for (const tracker of revoked) {
      tracker.revoked = true;
      tracker.buffer.clear();
      tracker.releaseRoom();
    }
    // Queued (never started) messages of these partitions are left to their next owner; those of
    // partitions stopped for a drain still run.
    this.discard((m) => revoked.includes((m as TrackedKafkaMessage).tracker));
    for (const tracker of revoked) this.draining.add(tracker);
    return this.commitWhenIdle(revoked, this.options.revokeTimeoutMs);
  }

  /** Waits up to `timeoutMs` for the trackers' running messages, then commits their positions. */
  private async commitWhenIdle(trackers: PartitionTracker[], timeoutMs: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.all(trackers.map((t) => t.idle())),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    // Without a held revoke (the classic protocol) the partitions may be another member's by now, and
    // committed further there: this commit must not move the group back below that.
    for (const tracker of await this.overtaken(trackers)) this.draining.delete(tracker);
    // The draining trackers are part of every commit until this one has landed.
    await this.commitAll();
    for (const tracker of trackers) this.draining.delete(tracker);
  }

  /** The trackers whose partition the group has meanwhile committed beyond their own position. */
  private async overtaken(trackers: PartitionTracker[]): Promise<PartitionTracker[]> {
    let found: CommittedOffset[];
    try {
      found = await this.adapter.committed(trackers);
      this.transportRecovered();
    } catch (error) {
      this.transportFailed('commit', error);
      return []; // Unknown: committed as before (at worst some finished work is handled again).
    }
    const groupAt = new Map(found.map((c) => [`${c.topic}:${c.partition}`, c.offset]));
    return trackers.filter((tracker) => {
      const theirs = groupAt.get(`${tracker.topic}:${tracker.partition}`);
      const ours = tracker.position();
      return theirs != null && ours !== null && BigInt(theirs) > BigInt(ours);
    });
  }

  /** A message finished (or was skipped as finished): once enough have since the last commit, a commit follows. */
  private countFinished(): void {
    this.finishedSinceCommit++;
    if (this.gapTimer === null) this.commitAfterGap();
  }

  /**
   * Commits now, or once `MIN_COMMIT_GAP_MS` has passed since the last commit started, unless another
   * commit took the count meanwhile. Also while a drain runs after intake stopped; not once the consumer
   * closes, which commits on its own.
   */
  private commitAfterGap(): void {
    if (this.closingConsumer || this.finishedSinceCommit < this.options.commitEveryMessages) return;
    const wait = this.lastCommitAt + MIN_COMMIT_GAP_MS - performance.now();
    if (wait <= 0) {
      void this.commitAll();
      return;
    }
    // A timer can fire early (the event loop's clock is read once per turn): the gap is checked again.
    this.gapTimer = setTimeout(() => {
      this.gapTimer = null;
      this.commitAfterGap();
    }, Math.ceil(wait));
  }

  /**
   * Commits the positions of every live and draining partition. One commit is in flight at a time;
   * requests meanwhile are served by a single commit after it.
   */
  commitAll(): Promise<boolean> {
    if (this.committing === null) {
      this.committing = this.commitNow().finally(() => {
        this.committing = null;
      });
      return this.committing;
    }
    this.nextCommit ??= this.committing.then(() => {
      this.nextCommit = null;
      return this.commitAll();
    });
    return this.nextCommit;
  }

  /**
   * Commits the positions that moved since this member last committed; false when the commit failed
   * (they are committed next time).
   */
  private async commitNow(): Promise<boolean> {
    this.finishedSinceCommit = 0;
    // A partition revoked and assigned again has two trackers for a moment: the one further on counts.
    const points = new Map<string, { point: TopicPartitionOffset; at: bigint }>();
    for (const tracker of [...this.draining, ...this.live.values()]) {
      const point = tracker.commitPoint(this.options.commitMetadataMaxBytes);
      if (point === null) continue;
      const id = `${point.topic}:${point.partition}`;
      const at = BigInt(point.offset);
      const other = points.get(id);
      if (other === undefined || other.at < at) points.set(id, { point, at });
    }
    const offsets: TopicPartitionOffset[] = [];
    const positions: bigint[] = [];
    for (const [id, { point, at }] of points) {
      const done = this.committed.get(id);
      if (done !== undefined && (done.at > at || (done.at === at && done.metadata === point.metadata))) {
        continue;
      }
      offsets.push(point);
      positions.push(at);
    }
    if (offsets.length === 0) return true;
    try {
      this.lastCommitAt = performance.now();
      await this.adapter.commit(offsets);
      this.transportRecovered();
    } catch (error) {
      // Not committed (e.g. the group is rebalancing, or the broker is gone): the position stays and is
      // committed next time, or its messages are delivered again — at-least-once either way.
      this.transportFailed('commit', error);
      return false;
    }
    offsets.forEach((o, i) => {
      const id = `${o.topic}:${o.partition}`;
      const done = this.committed.get(id);
      if (done === undefined || done.at <= positions[i]) {
        this.committed.set(id, { at: positions[i], metadata: o.metadata });
      }
    });
    return true;
  }
}

/** Records fetched while the tracker's commit metadata loads. */
function pendingRecords(tracker: PartitionTracker): number {
  let records = 0;
  for (const batch of tracker.pending) records += batch.length;
  return records;
}
