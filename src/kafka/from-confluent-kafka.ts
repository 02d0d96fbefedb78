import { optionsObject } from '../validate';
import { type ConfluentKafkaClient, confluentAdapter } from './confluent-adapter';
import { DEFAULT_METADATA_MAX_BYTES } from './finished-offsets';
import { KAFKA_RECEIVER_OPTIONS, KafkaReceiver, type KafkaReceiverOptions } from './kafka-receiver';

/** Options of `fromConfluentKafka`: the client, the consumer's configuration, the subscription and tuning. */
export interface FromConfluentKafkaOptions extends KafkaReceiverOptions {
  /** The @confluentinc/kafka-javascript module; the receiver creates its native consumer with it. */
  client: ConfluentKafkaClient;
  /**
   * librdkafka configuration of the consumer: `'bootstrap.servers'`, `'group.id'` (required), and any
   * other consumer property (`'group.protocol': 'consumer'` on Kafka 4+ for incremental rebalances).
   * The receiver sets `'enable.auto.commit'`, `'auto.offset.reset'`, `'rebalance_cb'` and
   * `'offset_commit_cb'` itself (refused here); `'fetch.message.max.bytes'` follows `prefetch` unless
   * set here.
   */
  config: Record<string, unknown>;
  /** Topics to subscribe to. */
  topics: string[];
  /** Where a group without committed offsets starts: `true` earliest, `false` latest. Default false. */
  fromBeginning?: boolean;
}

/**
 * A receiver over @confluentinc/kafka-javascript's native consumer (librdkafka): put `keyedDispatch`
 * right after it. Every rebalance waits for the revoked partitions' running messages (up to
 * `revokeTimeoutMs`) and their commit before the group moves them, on the classic protocol too. The
 * client adds a NUL byte to commit metadata, so the metadata written stays one byte below
 * `commitMetadataMaxBytes`.
 *
 * ```ts
 * import * as Confluent from '@confluentinc/kafka-javascript';
 * const orders = fromConfluentKafka({
 *   client: Confluent,
 *   config: { 'bootstrap.servers': 'localhost:9092', 'group.id': 'billing', 'group.protocol': 'consumer' },
 *   topics: ['orders'],
 * });
 * orders.pipe(keyedDispatch({ key: kafkaKey, handle: bill })).subscribe();
 * // on shutdown:
 * await orders.close();
 * ```
 */
export function fromConfluentKafka(options: FromConfluentKafkaOptions): KafkaReceiver {
  optionsObject('fromConfluentKafka', options, [
    ...KAFKA_RECEIVER_OPTIONS,
    'client',
    'config',
    'topics',
    'fromBeginning',
  ] satisfies Array<keyof FromConfluentKafkaOptions>);
  const { client, config, topics, fromBeginning, ...tuning } = options;
  const metadataMaxBytes = tuning.commitMetadataMaxBytes ?? DEFAULT_METADATA_MAX_BYTES;
  // The broker counts the NUL librdkafka adds; a value the receiver refuses is left for it to name.
  if (Number.isInteger(metadataMaxBytes) && metadataMaxBytes > 0) {
    tuning.commitMetadataMaxBytes = metadataMaxBytes - 1;
  }
  return new KafkaReceiver(
    confluentAdapter({ client, config, topics, fromBeginning }),
    tuning,
    'fromConfluentKafka()',
  );
}
