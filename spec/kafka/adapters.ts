import { Consumer } from '@platformatic/kafka';
import { Kafka, logLevel } from 'kafkajs';
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
   * A receiver built by the adapter's public entry (`fromKafka`, `fromPlatformaticKafka`); `reach`
   * changes how its client reaches the broker.
   */
  receiver(
    groupId: string,
    topics: string[],
    options?: KafkaReceiverOptions,
    reach?: Reach,
  ): ReturnType<typeof fromKafka>;
}

/** How a spec's client reaches the broker. */
export interface Reach {
  /** The address it bootstraps through, `host:port`. Default: the local broker. */
  broker?: string;
  /** Its requests give up after one retry 0.1 s later, so a broker that does not answer shows at once. */
  quickRetries?: boolean;
}

const platformaticRetry = (reach: Reach) => (reach.quickRetries ? { retries: 1, retryDelay: 100 } : {});

/** The kafkajs client of the receivers' consumers and admins; connecting retries by the client's settings. */
const kafkajsClient = (reach: Reach) =>
  reach.broker === undefined && !reach.quickRetries
    ? kafka('receiver-spec')
    : new Kafka({
        clientId: 'receiver-spec',
        brokers: [reach.broker ?? BROKER],
        logLevel: logLevel.NOTHING,
        ...(reach.quickRetries && { retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 100 } }),
      });

const kafkajsConsumer = (groupId: string, reach: Reach = {}) =>
  kafkajsClient(reach).consumer({ groupId, ...QUICK_GROUP });
/** Reads commit metadata back for the kafkajs adapter, whose consumer cannot. */
const kafkajsAdmin = (reach: Reach = {}) => kafkajsClient(reach).admin();

/**
 * A consumer on the KIP-848 group protocol. The broker sets its session timeout and heartbeat interval
 * (scripts/brokers/kafka.sh); the client checks `rebalanceTimeout` against its classic session timeout
 * default (60 s), so it is at least that.
 */
export const platformaticConsumer = (groupId: string, reach: Reach = {}) =>
  new Consumer({
    clientId: 'receiver-spec',
    bootstrapBrokers: [reach.broker ?? BROKER],
    ...platformaticRetry(reach),
    groupId,
    groupProtocol: 'consumer',
    rebalanceTimeout: 60_000,
  });

/** A consumer on the classic group protocol, with the same quick timings as the kafkajs one. */
const platformaticClassicConsumer = (groupId: string, reach: Reach = {}) =>
  new Consumer({
    clientId: 'receiver-spec',
    bootstrapBrokers: [reach.broker ?? BROKER],
    ...platformaticRetry(reach),
    groupId,
    sessionTimeout: QUICK_GROUP.sessionTimeout,
    heartbeatInterval: QUICK_GROUP.heartbeatInterval,
    rebalanceTimeout: QUICK_GROUP.rebalanceTimeout,
  });

export const ADAPTERS: ClientAdapter[] = [
  {
    name: 'kafkajs',
    member: 'kafkajs',
    holdsRevokes: false,
    adapter: (groupId, topics) =>
      kafkajsAdapter(kafkajsConsumer(groupId), { topics, fromBeginning: true, admin: kafkajsAdmin() }),
    receiver: (groupId, topics, options, reach) =>
      fromKafka({
        consumer: kafkajsConsumer(groupId, reach),
        admin: kafkajsAdmin(reach),
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
    receiver: (groupId, topics, options, reach) =>
      fromPlatformaticKafka({
        consumer: platformaticConsumer(groupId, reach),
        topics,
        fromBeginning: true,
        maxWaitMs: 100,
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
    receiver: (groupId, topics, options, reach) =>
      fromPlatformaticKafka({
        consumer: platformaticClassicConsumer(groupId, reach),
        topics,
        fromBeginning: true,
        maxWaitMs: 100,
        ...options,
      }),
  },
];
