import type { TransportOperation } from '../transport-fault';
import type { KafkaRecord } from './message';

/** One partition of a topic. */
export interface TopicPartition {
  /** The topic's name. */
  topic: string;
  /** The partition's number within its topic. */
  partition: number;
}

/** A position to commit: the offset of the next record to consume (last finished + 1). */
export interface TopicPartitionOffset extends TopicPartition {
  /** The offset, a 64-bit integer as a decimal string. */
  offset: string;
  /** Commit metadata written by the receiver (which offsets above `offset` already finished). */
  metadata?: string;
}

/** A partition's committed position in the group, as read back on assignment. */
export interface CommittedOffset extends TopicPartition {
  /** The committed offset, or null when the group has none for this partition. */
  offset: string | null;
  /** The metadata committed with it, or null. */
  metadata: string | null;
}

/** What an adapter reports to the receiver. */
export interface KafkaConsumerListener {
  /**
   * Records a partition buffers before its fetching pauses (the receiver's `prefetch`). A fetch
   * response lands whole in the buffer, so an adapter that chooses its fetch size asks each partition
   * for about this many records (see `partitionFetchBytes`).
   */
  readonly prefetch: number;
  /**
   * Fetched records of one partition, in offset order. Returns a promise when they filled the
   * partition's buffer (`prefetch`; the partition is paused) while no other partition still fetched
   * brought records since this one's previous batch: it resolves once the first such full partition is
   * down to half, a paused one resumes, records of another partition arrive, or the partition is let
   * go. The adapter holds its fetching until then: a client that fetches the quiet partitions meanwhile
   * would long-poll them (or, with every partition paused, kafkajs sleeps) for its whole fetch wait, and
   * only then fetch the resumed partition. While other partitions flow, none is held back to a full
   * one's pace: their fetches return as soon as records are there. A partition held by a parked hot key
   * never holds fetching (it drains at that key's pace): its wait resolves when it is held.
   *
   * `behind`: the partition holds more records than these (the batch ended below its high watermark),
   * so its next fetch brings more. Until then, should its buffer run empty, the other partitions take
   * no more than an equal share of the window, keeping its places for it (a slow backlog would take
   * them all, and hold them long). Leave it out when the client does not tell: no place is kept.
   *
   * `highWatermark`: the partition's high watermark in the fetch response that brought these records
   * (a 64-bit integer as a decimal string), from which the receiver's `transportLag` counts what is
   * left. Leave it out when the client does not tell: the partition then reports no lag.
   */
  batch(
    topic: string,
    partition: number,
    records: readonly KafkaRecord[],
    behind?: boolean,
    highWatermark?: string,
  ): Promise<void> | undefined;
  /**
   * Partitions are about to be revoked: without `partitions` every assigned one (eager rebalancing),
   * with it only those (cooperative / KIP-848: the others keep flowing). The receiver stops admitting
   * them, waits (up to `revokeTimeoutMs`) for their running messages and commits. Resolves once they
   * are let go: an adapter whose client can hold the rebalance releases them to the group then.
   */
  revoking(partitions?: readonly TopicPartition[]): Promise<void>;
  /**
   * Partitions were assigned. `'all'` (default, eager): the full new assignment, everything before is
   * gone. `'added'` (incremental): newly added partitions only, the others stay. Fetching starts at
   * their committed offsets, so the receiver tracks them afresh.
   */
  assigned(partitions: readonly TopicPartition[], mode?: 'all' | 'added'): void;
  /** The client failed and will not recover on its own. */
  failed(error: unknown): void;
  /**
   * The client failed and goes on (it retries): a fetch, a commit, a heartbeat, or the connection (the
   * client restarting after losing the broker). Report every such failure: the receiver counts it, tells
   * `onTransportError`, and fails once failures have lasted `maxUnreachableMs` with no
   * `transportRecovered()` in between.
   */
  transportFailed(operation: TransportOperation, error: unknown): void;
  /** An operation of the client succeeded (a fetch, a heartbeat, a join): the broker answers again. */
  transportRecovered(): void;
}

/**
 * The receiver's view of a Kafka client: a consumer-group member that fetches, pauses per partition,
 * commits explicit offsets (with metadata), reads them back and reports rebalances. `kafkajsAdapter`
 * implements it for kafkajs, `platformaticAdapter` for @platformatic/kafka; another client plugs in by
 * implementing these methods.
 */
export interface KafkaConsumerAdapter {
  /**
   * Connects, joins the group and starts fetching, reporting to `listener`. Resolves once running. After
   * rejecting with an outage's error (`isOutage`) it is called again, and starts afresh.
   */
  start(listener: KafkaConsumerListener): Promise<void>;
  /**
   * Whether an error of `start()` is one a broker outage causes (no broker answers, the group's
   * coordinator not found yet): the receiver then reports it as a `'connection'` fault and calls
   * `start()` again a second later, until it starts or the broker has been failing for
   * `maxUnreachableMs`. Any other error of `start()` errors the output at once, as every one does
   * when an adapter leaves this out.
   */
  isOutage?(error: unknown): boolean;
  /** Stops fetching these partitions (records already fetched may still arrive). */
  pause(partitions: readonly TopicPartition[]): void;
  /** Fetches these partitions again. */
  resume(partitions: readonly TopicPartition[]): void;
  /** Commits these positions (with their metadata) for the group. */
  commit(offsets: readonly TopicPartitionOffset[]): Promise<void>;
  /** The group's committed offsets and metadata for these partitions. */
  committed(partitions: readonly TopicPartition[]): Promise<CommittedOffset[]>;
  /** Leaves the group and disconnects. */
  close(): Promise<void>;
}
