export type {
  CommittedOffset,
  KafkaConsumerAdapter,
  KafkaConsumerListener,
  TopicPartition,
  TopicPartitionOffset,
} from './adapter';
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
export {
  type KafkaJsProducer,
  type KeyedProducer,
  type KeyedProducerOptions,
  keyedProducer,
} from './keyed-producer';
export { type KafkaHeaders, type KafkaMessage, type KafkaRecord, kafkaKey } from './message';
export {
  type PlatformaticAdapterOptions,
  type PlatformaticConsumer,
  platformaticAdapter,
} from './platformatic-adapter';
