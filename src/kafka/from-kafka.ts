import { optionsObject } from '../validate';
import { KAFKA_RECEIVER_OPTIONS, KafkaReceiver, type KafkaReceiverOptions } from './kafka-receiver';
import { type KafkaJsAdmin, type KafkaJsConsumer, kafkajsAdapter } from './kafkajs-adapter';

export interface FromKafkaOptions extends KafkaReceiverOptions {
  /**
   * A kafkajs consumer, created and not yet connected; the receiver connects, runs and disconnects it.
   * Its `maxBytesPerPartition` (kafkajs default 1 MiB) bounds what a backlog holds in memory, which the
   * receiver cannot change: set it to about `prefetch` × 32 bytes (see the Kafka guide's Memory).
   */
  consumer: KafkaJsConsumer;
  /** Topics (names or patterns) to subscribe to. */
  topics: Array<string | RegExp>;
  /** Where a group without committed offsets starts: `true` earliest, `false` latest. Default false. */
  fromBeginning?: boolean;
  /**
   * A kafkajs admin client (`kafka.admin()`, not yet connected): lets the receiver read its commit
   * metadata back, so work that finished above the committed offset is not handled again after a
   * restart or rebalance. Recommended; without it that work is handled again.
   */
  admin?: KafkaJsAdmin;
}

/**
 * A receiver over a kafkajs consumer group member: put `keyedDispatch` right after it.
 *
 * ```ts
 * const orders = fromKafka({
 *   // kafkajs fetches 1 MiB a partition unless told: about prefetch × 32 bytes bounds memory.
 *   consumer: kafka.consumer({ groupId: 'billing', maxBytesPerPartition: 32_768 }),
 *   admin: kafka.admin(),
 *   topics: ['orders'],
 * });
 * orders.pipe(keyedDispatch({ key: kafkaKey, handle: bill })).subscribe();
 * // on shutdown:
 * await orders.close();
 * ```
 */
export function fromKafka(options: FromKafkaOptions): KafkaReceiver {
  optionsObject('fromKafka', options, [
    ...KAFKA_RECEIVER_OPTIONS,
    'consumer',
    'topics',
    'fromBeginning',
    'admin',
  ] satisfies Array<keyof FromKafkaOptions>);
  const { consumer, topics, fromBeginning, admin, ...tuning } = options;
  return new KafkaReceiver(kafkajsAdapter(consumer, { topics, fromBeginning, admin }), tuning, 'fromKafka()');
}
