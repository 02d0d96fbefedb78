// The receiver types this subpath's classes extend, so a consumer's declarations can name them here.
export type { ReceiverSession, ReceiverSink, SettledListener, Settlement } from '../receiver';
export { openReceiver, Receiver } from '../receiver';
export type { FailedAction } from '../receivers/failed-action';
export type { TransportFault, TransportHealthOptions, TransportOperation } from '../transport-fault';
export type { TransportLag } from '../transport-lag';
export type {
  CommittedOffset,
  KafkaConsumerAdapter,
  KafkaConsumerListener,
  TopicPartition,
  TopicPartitionOffset,
} from './adapter';
export {
  DEAD_LETTER_HEADERS,
  type DeadLetterToTopicOptions,
  deadLetterToTopic,
  type KafkaDeadLetter,
} from './dead-letter-to-topic';
export { type FromKafkaOptions, fromKafka } from './from-kafka';
export { type FromPlatformaticKafkaOptions, fromPlatformaticKafka } from './from-platformatic-kafka';
export { KafkaReceiver, type KafkaReceiverOptions } from './kafka-receiver';
export {
  type KafkaJsAdapterOptions,
  type KafkaJsAdmin,
  type KafkaJsBatchPayload,
  type KafkaJsConsumer,
  kafkajsAdapter,
} from './kafkajs-adapter';
export type { KafkaJsClient, KafkaJsGroupConfig } from './kafkajs-client';
export { type KeyedProducer, type KeyedProducerOptions, keyedProducer } from './keyed-producer';
export {
  type KafkaBytes,
  type KafkaHeaders,
  type KafkaMessage,
  type KafkaRecord,
  kafkaKey,
} from './message';
export {
  type PlatformaticAdapterOptions,
  type PlatformaticConsumer,
  platformaticAdapter,
} from './platformatic-adapter';
export type {
  KafkaJsProducer,
  KafkaJsProducerRecord,
  KafkaProducer,
  PlatformaticProducer,
} from './record-sender';
