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
}

/** What an adapter reports to the receiver. */
export interface KafkaConsumerListener {
  /** Fetched records of one partition, in offset order. */
  batch(topic: string, partition: number, records: readonly KafkaRecord[]): void;
  /**
   * A rebalance began: every assigned partition is about to be revoked (eager rebalancing). The
   * receiver stops admitting them, waits (bounded) for their running messages and commits.
   */
  revoking(): void;
  /**
   * The consumer joined the group (again) with these partitions. Fetching restarts at their committed
   * offsets, so the receiver starts tracking them afresh.
   */
  assigned(partitions: readonly TopicPartition[]): void;
  /** The client failed and will not recover on its own. */
  failed(error: unknown): void;
}

/**
 * The receiver's view of a Kafka client: a consumer-group member that fetches, pauses per partition,
 * commits explicit offsets and reports rebalances. `kafkajsAdapter` implements it for kafkajs; another
 * client plugs in by implementing these five methods.
 */
export interface KafkaConsumerAdapter {
  /** Connects, joins the group and starts fetching, reporting to `listener`. Resolves once running. */
  start(listener: KafkaConsumerListener): Promise<void>;
  /** Stops fetching these partitions (records already fetched may still arrive). */
  pause(partitions: readonly TopicPartition[]): void;
  /** Fetches these partitions again. */
  resume(partitions: readonly TopicPartition[]): void;
  /** Commits these positions for the group. */
  commit(offsets: readonly TopicPartitionOffset[]): Promise<void>;
  /** Leaves the group and disconnects. */
  close(): Promise<void>;
}
