import { optionsObject } from '../validate';
import { KAFKA_RECEIVER_OPTIONS, KafkaReceiver, type KafkaReceiverOptions } from './kafka-receiver';
import { type PlatformaticConsumer, platformaticAdapter } from './platformatic-adapter';

/** Options of `fromPlatformaticKafka`: the consumer, its subscription and the receiver's tuning. */
export interface FromPlatformaticKafkaOptions extends KafkaReceiverOptions {
  /**
   * A @platformatic/kafka 2.12 `Consumer` (peer range `~2.12.1`: the adapter uses two of its internal
   * hooks), created and not yet consuming; the receiver joins its group, fetches, commits and closes it.
   * `groupProtocol: 'consumer'` (Kafka 4+) is recommended. A consumer that lacks what the adapter uses
   * is refused here (see `platformaticAdapter`).
   */
  consumer: PlatformaticConsumer;
  /** Topics to subscribe to. */
  topics: string[];
  /** Where a group without committed offsets starts: `true` earliest, `false` latest. Default false. */
  fromBeginning?: boolean;
  /** How long a fetch waits on the broker for new records, in ms. Integer ≥ 0. Default 500. */
  maxWaitMs?: number;
}

/**
 * A receiver over a @platformatic/kafka consumer group member: put `keyedDispatch` right after it.
 * With `groupProtocol: 'consumer'`, a rebalance moves only the partitions that change owner, and
 * waits for their running messages (up to `revokeTimeoutMs`) before the new owner gets them.
 *
 * ```ts
 * const consumer = new Consumer({
 *   clientId: 'billing',
 *   bootstrapBrokers: ['localhost:9092'],
 *   groupId: 'billing',
 *   groupProtocol: 'consumer',
 * });
 * const orders = fromPlatformaticKafka({ consumer, topics: ['orders'] });
 * orders.pipe(keyedDispatch({ key: kafkaKey, handle: bill })).subscribe();
 * // on shutdown:
 * await orders.close();
 * ```
 */
export function fromPlatformaticKafka(options: FromPlatformaticKafkaOptions): KafkaReceiver {
  optionsObject('fromPlatformaticKafka', options, [
    ...KAFKA_RECEIVER_OPTIONS,
    'consumer',
    'topics',
    'fromBeginning',
    'maxWaitMs',
  ] satisfies Array<keyof FromPlatformaticKafkaOptions>);
  const { consumer, topics, fromBeginning, maxWaitMs, ...tuning } = options;
  return new KafkaReceiver(
    platformaticAdapter(consumer, { topics, fromBeginning, maxWaitMs }),
    tuning,
    'fromPlatformaticKafka()',
  );
}
