import { Consumer } from '@platformatic/kafka';
import {
  fromKafka,
  fromPlatformaticKafka,
  type KafkaConsumerAdapter,
  type KafkaReceiverOptions,
  kafkajsAdapter,
  platformaticAdapter,
} from 'keyed-dispatch/kafka';
import { BROKER, kafka, QUICK_GROUP } from './broker';

/** A Kafka client the receiver runs on, set up for quick rebalances on the local broker. */
export interface ClientAdapter {
  name: string;
  /** The client argument of the scale-out member process (scale-out-consumer.ts); none: not scaled out. */
  member?: 'kafkajs' | 'platformatic';
  /** Whether a revoke holds the rebalance until the partitions' running messages finish (KIP-848). */
  holdsRevokes: boolean;
  /** An adapter for a new member of `groupId` reading `topics` from the beginning. */
  adapter(groupId: string, topics: string[]): KafkaConsumerAdapter;
  /**
   * A receiver built by the adapter's public entry (`fromKafka`, `fromPlatformaticKafka`); `client`
   * tunes the client's own fetching.
   */
  receiver(
    groupId: string,
    topics: string[],
    options?: KafkaReceiverOptions,
    client?: ClientFetching,
  ): ReturnType<typeof fromKafka>;
}

/** The client's own fetch settings, where a spec needs other than its defaults. */
export interface ClientFetching {
  /** Most bytes a fetch returns per partition (both clients call it `maxBytesPerPartition`). */
  maxBytesPerPartition?: number;
  /** How long a fetch waits on the broker for records (kafkajs: `maxWaitTimeInMs`). */
  maxWaitMs?: number;
}

const kafkajsConsumer = (groupId: string, client?: ClientFetching) =>
  kafka('receiver-spec').consumer({
    groupId,
    ...QUICK_GROUP,
    maxBytesPerPartition: client?.maxBytesPerPartition,
    maxWaitTimeInMs: client?.maxWaitMs ?? QUICK_GROUP.maxWaitTimeInMs,
  });
/** A @platformatic/kafka consumer's options for `client` (left out where not set: its defaults stay). */
const platformaticFetching = (client?: ClientFetching) =>
  client?.maxBytesPerPartition === undefined ? {} : { maxBytesPerPartition: client.maxBytesPerPartition };
/** Reads commit metadata back for the kafkajs adapter, whose consumer cannot. */
const kafkajsAdmin = () => kafka('receiver-spec').admin();

/**
 * A consumer on the KIP-848 group protocol. The broker sets its session timeout and heartbeat interval
 * (scripts/brokers/kafka.sh); the client checks `rebalanceTimeout` against its classic session timeout
 * default (60 s), so it is at least that.
 */
export const platformaticConsumer = (groupId: string, client?: ClientFetching) =>
  new Consumer({
    clientId: 'receiver-spec',
    bootstrapBrokers: [BROKER],
    groupId,
    groupProtocol: 'consumer',
    rebalanceTimeout: 60_000,
    ...platformaticFetching(client),
  });

/** A consumer on the classic group protocol, with the same quick timings as the kafkajs one. */
const platformaticClassicConsumer = (groupId: string, client?: ClientFetching) =>
  new Consumer({
    clientId: 'receiver-spec',
    bootstrapBrokers: [BROKER],
    groupId,
    sessionTimeout: QUICK_GROUP.sessionTimeout,
    heartbeatInterval: QUICK_GROUP.heartbeatInterval,
    rebalanceTimeout: QUICK_GROUP.rebalanceTimeout,
    ...platformaticFetching(client),
  });

export const ADAPTERS: ClientAdapter[] = [
  {
    name: 'kafkajs',
    member: 'kafkajs',
    holdsRevokes: false,
    adapter: (groupId, topics) =>
      kafkajsAdapter(kafkajsConsumer(groupId), { topics, fromBeginning: true, admin: kafkajsAdmin() }),
    receiver: (groupId, topics, options, client) =>
      fromKafka({
        consumer: kafkajsConsumer(groupId, client),
        admin: kafkajsAdmin(),
        topics,
        fromBeginning: true,
        ...options,
      }),
  },
  {
    name: '@platformatic/kafka',
    member: 'platformatic',
    holdsRevokes: true,
    adapter: (groupId, topics) =>
      platformaticAdapter(platformaticConsumer(groupId), { topics, fromBeginning: true, maxWaitMs: 100 }),
    receiver: (groupId, topics, options, client) =>
      fromPlatformaticKafka({
        consumer: platformaticConsumer(groupId, client),
        topics,
        fromBeginning: true,
        maxWaitMs: client?.maxWaitMs ?? 100,
        ...options,
      }),
  },
  {
    name: '@platformatic/kafka on the classic protocol',
    holdsRevokes: false,
    adapter: (groupId, topics) =>
      platformaticAdapter(platformaticClassicConsumer(groupId), {
        topics,
        fromBeginning: true,
        maxWaitMs: 100,
      }),
    receiver: (groupId, topics, options, client) =>
      fromPlatformaticKafka({
        consumer: platformaticClassicConsumer(groupId, client),
        topics,
        fromBeginning: true,
        maxWaitMs: client?.maxWaitMs ?? 100,
        ...options,
      }),
  },
];
