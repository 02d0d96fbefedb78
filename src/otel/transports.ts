import type { KafkaHeaders, KafkaMessage } from '../kafka/message';
import type { JetStreamMessage } from '../nats/message';
import type { RedisStreamMessage } from '../redis/message';
import type { TracedMessage } from './tracing';

/** A Kafka record for `traced`: topic, partition, offset; the trace context from its record headers. */
export function kafkaTracing(message: KafkaMessage): TracedMessage {
  return {
    destination: message.topic,
    attributes: {
      'messaging.destination.partition.id': String(message.partition),
      'messaging.kafka.offset': Number(message.offset),
    },
    headers: (name) => headerText(message.headers, name),
  };
}

/** A JetStream message for `traced`: subject, stream sequence, delivery count; the context from its headers. */
export function jetStreamTracing(message: JetStreamMessage): TracedMessage {
  const { headers } = message;
  return {
    destination: message.subject,
    attributes: {
      'messaging.message.id': String(message.seq),
      'messaging.nats.delivery_count': message.deliveryCount,
    },
    headers: (name) => (headers?.has(name) ? headers.get(name) : undefined),
  };
}

/**
 * A Redis Streams entry for `traced`: stream and entry id. An entry has no headers; its `traceparent`
 * and `tracestate` fields, when the producer wrote them, carry the context instead.
 */
export function redisTracing(message: RedisStreamMessage): TracedMessage {
  return {
    destination: message.stream,
    attributes: {
      'messaging.message.id': message.id,
      'messaging.redis.delivery_count': message.deliveryCount,
    },
    headers: (name) => message.fields[name],
  };
}

function headerText(headers: KafkaHeaders, name: string): string | undefined {
  const value = headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  if (first === undefined || typeof first === 'string') return first;
  // A record posted to a thread lane has its header Buffers cloned as plain Uint8Arrays.
  return utf8.decode(first);
}

const utf8 = new TextDecoder();
