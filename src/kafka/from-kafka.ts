import { describe, optionsObject } from '../validate';
import { partitionFetchBytes } from './fetch-size';
import { KAFKA_RECEIVER_OPTIONS, KafkaReceiver, type KafkaReceiverOptions } from './kafka-receiver';
import { type KafkaJsAdmin, type KafkaJsConsumer, kafkajsAdapterOf } from './kafkajs-adapter';
import type { KafkaJsClient, KafkaJsGroupConfig } from './kafkajs-client';

/**
 * `prefetch` when none is given. kafkajs keeps objects of its own per fetched record; records that stay
 * buffered for long outlive the young generation's collections and are promoted, and the heap then
 * grows to a multiple of what was live at the last full collection. A smaller buffer, and fetches of
 * 4,800 bytes a partition sized from it, keep the peak down; the rate holds.
 */
const KAFKAJS_PREFETCH = 150;

/** Options of `fromKafka`: the kafkajs client and group (or a consumer), the subscription and tuning. */
export interface FromKafkaOptions extends KafkaReceiverOptions {
  /**
   * The kafkajs `Kafka` client: the receiver creates its consumer (`kafka.consumer(group)`), sizing
   * its fetches from `prefetch`, and its admin client (`kafka.admin()`) to read commit metadata back.
   * Give this and `group`, or `consumer`, not both.
   */
  kafka?: KafkaJsClient;
  /** With `kafka`: the consumer's kafkajs config (`groupId`, …); a `maxBytesPerPartition` set here wins. */
  group?: KafkaJsGroupConfig;
  /**
   * A kafkajs consumer, created and not yet connected, instead of `kafka`: the receiver connects, runs
   * and disconnects it, but cannot size its fetches. Its `maxBytesPerPartition` (kafkajs default
   * 1 MiB) then bounds what a backlog holds in memory: set it to about `prefetch` × 32 bytes.
   */
  consumer?: KafkaJsConsumer;
  /** Topics (names or patterns) to subscribe to. */
  topics: Array<string | RegExp>;
  /** Where a group without committed offsets starts: `true` earliest, `false` latest. Default false. */
  fromBeginning?: boolean;
  /**
   * A kafkajs admin client (`kafka.admin()`, not yet connected): lets the receiver read its commit
   * metadata back, so work that finished above the committed offset is not handled again after a
   * restart or rebalance. Default with `kafka`: `kafka.admin()`; with `consumer`: none, and that work
   * is handled again.
   */
  admin?: KafkaJsAdmin;
}

/**
 * A receiver over a kafkajs consumer group member: put `keyedDispatch` right after it.
 *
 * ```ts
 * const kafka = new Kafka({ clientId: 'billing', brokers: ['localhost:9092'] });
 * const orders = fromKafka({ kafka, group: { groupId: 'billing' }, topics: ['orders'] });
 * orders.pipe(keyedDispatch({ key: kafkaKey, handle: bill })).subscribe();
 * // on shutdown:
 * await orders.close();
 * ```
 */
export function fromKafka(options: FromKafkaOptions): KafkaReceiver {
  optionsObject('fromKafka', options, [
    ...KAFKA_RECEIVER_OPTIONS,
    'kafka',
    'group',
    'consumer',
    'topics',
    'fromBeginning',
    'admin',
  ] satisfies Array<keyof FromKafkaOptions>);
  const { kafka, group, consumer, topics, fromBeginning, admin, ...tuning } = options;
  if ((kafka === undefined) === (consumer === undefined)) {
    throw new TypeError(
      `fromKafka: expected one of \`kafka\` (a kafkajs Kafka client, with \`group\`) or \`consumer\` (a kafkajs Consumer), got ${kafka === undefined ? 'neither' : 'both'}`,
    );
  }
  tuning.prefetch ??= KAFKAJS_PREFETCH;
  const adapterOptions = { topics, fromBeginning };
  if (consumer !== undefined) {
    if (group !== undefined) {
      throw new TypeError(
        `fromKafka: \`group\` configures the consumer created from \`kafka\`; with \`consumer\` given, got ${describe(group)}`,
      );
    }
    return new KafkaReceiver(
      kafkajsAdapterOf(() => consumer, { ...adapterOptions, admin }),
      tuning,
      'fromKafka()',
    );
  }
  const client = kafka as KafkaJsClient;
  if (typeof client?.consumer !== 'function' || typeof client.admin !== 'function') {
    throw new TypeError(`fromKafka: expected \`kafka\` to be a kafkajs Kafka client, got ${describe(kafka)}`);
  }
  if (typeof group?.groupId !== 'string') {
    throw new TypeError(
      `fromKafka: expected \`group\` to be a kafkajs consumer config with a string \`groupId\`, got ${describe(group)}`,
    );
  }
  const sized = (prefetch: number) =>
    client.consumer({
      ...group,
      maxBytesPerPartition: group.maxBytesPerPartition ?? partitionFetchBytes(prefetch),
    });
  return new KafkaReceiver(
    kafkajsAdapterOf(sized, { ...adapterOptions, admin: admin ?? client.admin() }),
    tuning,
    'fromKafka()',
  );
}
