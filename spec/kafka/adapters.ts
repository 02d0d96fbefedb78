import { Consumer } from '@platformatic/kafka';
import { Kafka, logLevel } from 'kafkajs';
import {
  type ConfluentKafkaClient,
  confluentAdapter,
  fromConfluentKafka,
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
  member?: 'kafkajs' | 'platformatic' | 'confluent';
  /** Whether a revoke holds the rebalance until the partitions' running messages finish (KIP-848). */
  holdsRevokes: boolean;
  /** Whether the partitions a member keeps stop fetching while its revoke is held (librdkafka pauses them). */
  pausesKeptDuringRevoke?: boolean;
  /** An adapter for a new member of `groupId` reading `topics` from the beginning; `client` as `receiver`'s. */
  adapter(groupId: string, topics: string[], client?: ClientSettings): KafkaConsumerAdapter;
  /**
   * A receiver built by the adapter's public entry (`fromKafka`, `fromPlatformaticKafka`); `client`
   * changes how its client reaches the broker and fetches.
   */
  receiver(
    groupId: string,
    topics: string[],
    options?: KafkaReceiverOptions,
    client?: ClientSettings,
  ): ReturnType<typeof fromKafka>;
}

/** A spec's client settings, where it needs other than the defaults. */
export interface ClientSettings {
  /** The address it bootstraps through, `host:port`. Default: the local broker. */
  broker?: string;
  /** Its requests give up after one retry 0.1 s later, so a broker that does not answer shows at once. */
  quickRetries?: boolean;
  /** Most bytes a fetch returns per partition (both clients call it `maxBytesPerPartition`). */
  maxBytesPerPartition?: number;
  /** How long a fetch waits on the broker for records (kafkajs: `maxWaitTimeInMs`). */
  maxWaitMs?: number;
}

const platformaticRetry = (client: ClientSettings) =>
  client.quickRetries ? { retries: 1, retryDelay: 100 } : {};

/** The kafkajs client of the receivers' consumers and admins; connecting retries by the client's settings. */
const kafkajsClient = (client: ClientSettings) =>
  client.broker === undefined && !client.quickRetries
    ? kafka('receiver-spec')
    : new Kafka({
        clientId: 'receiver-spec',
        brokers: [client.broker ?? BROKER],
        logLevel: logLevel.NOTHING,
        ...(client.quickRetries && { retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 100 } }),
      });

const kafkajsConsumer = (groupId: string, client: ClientSettings = {}) =>
  kafkajsClient(client).consumer({
    groupId,
    ...QUICK_GROUP,
    maxBytesPerPartition: client.maxBytesPerPartition,
    maxWaitTimeInMs: client.maxWaitMs ?? QUICK_GROUP.maxWaitTimeInMs,
  });
/** A @platformatic/kafka consumer's fetch size, where set (else its defaults stay). */
const platformaticFetching = (client: ClientSettings) =>
  client.maxBytesPerPartition === undefined ? {} : { maxBytesPerPartition: client.maxBytesPerPartition };
/** Reads commit metadata back for the kafkajs adapter, whose consumer cannot. */
const kafkajsAdmin = (client: ClientSettings = {}) => kafkajsClient(client).admin();

/**
 * A consumer on the KIP-848 group protocol. The broker sets its session timeout and heartbeat interval
 * (scripts/brokers/kafka.sh); the client checks `rebalanceTimeout` against its classic session timeout
 * default (60 s), so it is at least that.
 */
export const platformaticConsumer = (groupId: string, client: ClientSettings = {}) =>
  new Consumer({
    clientId: 'receiver-spec',
    bootstrapBrokers: [client.broker ?? BROKER],
    ...platformaticRetry(client),
    ...platformaticFetching(client),
    groupId,
    groupProtocol: 'consumer',
    rebalanceTimeout: 60_000,
  });

/** A consumer on the classic group protocol, with the same quick timings as the kafkajs one. */
const platformaticClassicConsumer = (groupId: string, client: ClientSettings = {}) =>
  new Consumer({
    clientId: 'receiver-spec',
    bootstrapBrokers: [client.broker ?? BROKER],
    ...platformaticRetry(client),
    ...platformaticFetching(client),
    groupId,
    sessionTimeout: QUICK_GROUP.sessionTimeout,
    heartbeatInterval: QUICK_GROUP.heartbeatInterval,
    rebalanceTimeout: QUICK_GROUP.rebalanceTimeout,
  });

/**
 * @confluentinc/kafka-javascript, where it is built (`scripts/confluent-kafka.sh install`): its set-up
 * runs only there (CI builds it, or takes it from its cache).
 */
export const confluent: ConfluentKafkaClient | undefined = (() => {
  try {
    return require('@confluentinc/kafka-javascript');
  } catch {
    return undefined;
  }
})();

/**
 * The librdkafka configuration of a Confluent member on the KIP-848 group protocol (the broker sets its
 * session timeout and heartbeat interval), fetching with the same quick wait as the others.
 */
export const confluentConfig = (groupId: string, client: ClientSettings = {}): Record<string, unknown> => ({
  'client.id': 'receiver-spec',
  'bootstrap.servers': client.broker ?? BROKER,
  'group.id': groupId,
  'group.protocol': 'consumer',
  'fetch.wait.max.ms': client.maxWaitMs ?? QUICK_GROUP.maxWaitTimeInMs,
  ...(client.maxBytesPerPartition !== undefined && {
    'fetch.message.max.bytes': client.maxBytesPerPartition,
  }),
  ...(client.quickRetries && {
    'socket.timeout.ms': 1000,
    'reconnect.backoff.ms': 100,
    'reconnect.backoff.max.ms': 100,
  }),
});

const CONFLUENT: ClientAdapter[] =
  confluent === undefined
    ? []
    : [
        {
          name: '@confluentinc/kafka-javascript',
          member: 'confluent',
          holdsRevokes: true,
          pausesKeptDuringRevoke: true,
          adapter: (groupId, topics, client) =>
            confluentAdapter({
              client: confluent,
              config: confluentConfig(groupId, client),
              topics,
              fromBeginning: true,
            }),
          receiver: (groupId, topics, options, client) =>
            fromConfluentKafka({
              client: confluent,
              config: confluentConfig(groupId, client),
              topics,
              fromBeginning: true,
              ...options,
            }),
        },
      ];

export const ADAPTERS: ClientAdapter[] = [
  {
    name: 'kafkajs',
    member: 'kafkajs',
    holdsRevokes: false,
    adapter: (groupId, topics, client) =>
      kafkajsAdapter(kafkajsConsumer(groupId, client), {
        topics,
        fromBeginning: true,
        admin: kafkajsAdmin(client),
      }),
    receiver: (groupId, topics, options, client) =>
      fromKafka({
        consumer: kafkajsConsumer(groupId, client),
        admin: kafkajsAdmin(client),
        topics,
        fromBeginning: true,
        ...options,
      }),
  },
  {
    name: '@platformatic/kafka',
    member: 'platformatic',
    holdsRevokes: true,
    adapter: (groupId, topics, client) =>
      platformaticAdapter(platformaticConsumer(groupId, client), {
        topics,
        fromBeginning: true,
        maxWaitMs: client?.maxWaitMs ?? 100,
      }),
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
    adapter: (groupId, topics, client) =>
      platformaticAdapter(platformaticClassicConsumer(groupId, client), {
        topics,
        fromBeginning: true,
        maxWaitMs: client?.maxWaitMs ?? 100,
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
  ...CONFLUENT,
];
