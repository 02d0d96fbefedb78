import type { KafkaJsAdmin, KafkaJsConsumer } from './kafkajs-adapter';

/** The part of a kafkajs `Kafka` client the receiver uses to create its own consumer and admin client. */
export interface KafkaJsClient {
  /** kafkajs' `consumer`: a group member, created with `group` and the fetch size the receiver chose. */
  consumer(config: KafkaJsGroupConfig): KafkaJsConsumer;
  /** kafkajs' `admin`: reads commit metadata back. */
  admin(): KafkaJsAdmin;
}

/**
 * A kafkajs consumer config (`ConsumerConfig`: `groupId`, `sessionTimeout`, `groupInstanceId`, …),
 * passed to `kafka.consumer()` as given.
 */
export interface KafkaJsGroupConfig {
  /** The consumer group. */
  groupId: string;
  /**
   * Bytes a fetch asks of each partition. Default: sized from the receiver's `prefetch` (about 32
   * bytes a record, 4 KiB–1 MiB), so a backlog holds about `prefetch` records a partition, not
   * kafkajs' own 1 MiB of them. Set it to choose the size yourself.
   */
  maxBytesPerPartition?: number;
  /** kafkajs' other consumer options. */
  [option: string]: unknown;
}
