/**
 * The part of @confluentinc/kafka-javascript's native (librdkafka) API the adapter uses, typed by shape so
 * the client stays an optional peer.
 */

/** A librdkafka error as the client hands it over. */
export interface RdKafkaError extends Error {
  /** librdkafka's error code (negative: the client's own, positive: the broker's). */
  code: number;
  /** Whether librdkafka calls it retriable. */
  isRetriable?: boolean;
}

/** A partition, and where the client puts a position, its metadata and its own error. */
export interface RdTopicPartition {
  topic: string;
  partition: number;
  offset?: number;
  metadata?: string | null;
  error?: RdKafkaError;
}

/** A fetched message of the native consumer. */
export interface RdMessage {
  topic: string;
  partition: number;
  offset: number;
  key?: Buffer | string | null;
  value: Buffer | null;
  timestamp?: number;
  headers?: Array<Record<string, Buffer | string>>;
}

/** The native `KafkaConsumer`. */
export interface RdKafkaConsumer {
  connect(options: object, cb: (err: RdKafkaError | null) => void): unknown;
  disconnect(cb: (err: RdKafkaError | null) => void): unknown;
  isConnected(): boolean;
  subscribe(topics: string[]): unknown;
  unsubscribe(): unknown;
  consume(count: number, cb: (err: RdKafkaError | null, messages: RdMessage[]) => void): void;
  setDefaultConsumeTimeout(ms: number): void;
  /** Whether `consume(count)` waits its timeout for the first message only, then takes what is there. */
  setDefaultIsTimeoutOnlyForFirstMessage(only: boolean): void;
  assign(partitions: RdTopicPartition[]): unknown;
  unassign(): unknown;
  incrementalAssign(partitions: RdTopicPartition[]): unknown;
  incrementalUnassign(partitions: RdTopicPartition[]): unknown;
  /** `'COOPERATIVE'` (incremental: the consumer protocol, or a cooperative assignor) or `'EAGER'`. */
  rebalanceProtocol(): string;
  /** The assignment was lost (the session expired): its partitions are someone else's already. */
  assignmentLost(): boolean;
  /** Queues a commit; its outcome comes to the `offset_commit_cb`. */
  commit(partitions: RdTopicPartition[]): unknown;
  pause(partitions: RdTopicPartition[]): unknown;
  resume(partitions: RdTopicPartition[]): unknown;
  /** The partition's offsets as the last fetch response told (no request). */
  getWatermarkOffsets(topic: string, partition: number): { highOffset: number; lowOffset: number };
  on(event: 'event.error', listener: (error: RdKafkaError) => void): unknown;
}

/** The native `AdminClient`, over the consumer's own connection. */
export interface RdKafkaAdmin {
  listConsumerGroupOffsets(
    groups: Array<{ groupId: string; partitions: RdTopicPartition[] }>,
    options: { timeout?: number },
    cb: (
      err: RdKafkaError | null,
      result: Array<{ groupId: string; error?: RdKafkaError; partitions: RdTopicPartition[] }>,
    ) => void,
  ): void;
}

/** librdkafka configuration properties (`'bootstrap.servers'`, `'group.id'`, …). */
export type RdKafkaConfig = Record<string, unknown>;

/** librdkafka's error codes the adapter tells apart. */
export const RdKafkaCodes = {
  /** The rebalance callback assigns partitions. */
  ASSIGN_PARTITIONS: -175,
  /** The rebalance callback revokes partitions. */
  REVOKE_PARTITIONS: -174,
  /** A consume that found nothing in time. */
  TIMED_OUT: -185,
  /** Nothing to commit. */
  NO_OFFSET: -168,
} as const;
