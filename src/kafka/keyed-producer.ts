import { describe, functionOption, optionsObject } from '../validate';
import type { KafkaHeaders } from './message';
import { headerList, type KafkaProducer, recordSender } from './record-sender';

/** Options of `keyedProducer`. */
export interface KeyedProducerOptions<T> {
  /** The topic to send to. */
  topic: string;
  /** The aggregate ID of a message: the record key, so every message of one aggregate lands in one partition. */
  key: (message: T) => string;
  /** The record value: text, or bytes (any `Uint8Array`; a `Buffer` is one). Default `JSON.stringify(message)`. */
  value?: (message: T) => string | Uint8Array;
  /** Record headers of a message (values as text or bytes). Default none. */
  headers?: (message: T) => KafkaHeaders<Uint8Array>;
}

/** Sends messages keyed by aggregate ID. */
export interface KeyedProducer<T> {
  /** Sends one message or several (in one request, in order); resolves when the broker has acknowledged them. */
  send(messages: T | readonly T[]): Promise<void>;
}

/**
 * A producer helper that keys every record by its aggregate ID, on a kafkajs producer or a
 * @platformatic/kafka one (its default, bytes-only producer). With the client's partitioner each key
 * stays in one partition, so the consumer group delivers an aggregate's messages in order to one member,
 * and `keyedDispatch` keeps that order per key. Use an idempotent producer (kafkajs `idempotent: true`,
 * @platformatic/kafka `idempotent: true`): retries then never duplicate or reorder records.
 */
export function keyedProducer<T>(
  producer: KafkaProducer,
  options: KeyedProducerOptions<T>,
): KeyedProducer<T> {
  optionsObject('keyedProducer', options, ['topic', 'key', 'value', 'headers'] satisfies Array<
    keyof KeyedProducerOptions<T>
  >);
  if (typeof options.topic !== 'string' || options.topic.length === 0) {
    throw new TypeError(
      `keyedProducer: expected \`topic\` to be a non-empty string, got ${describe(options.topic)}`,
    );
  }
  const { topic } = options;
  const key = functionOption('keyedProducer', 'key', options.key);
  const value =
    options.value === undefined ? JSON.stringify : functionOption('keyedProducer', 'value', options.value);
  const headers =
    options.headers === undefined ? undefined : functionOption('keyedProducer', 'headers', options.headers);
  const send = recordSender('keyedProducer', producer);
  const record = (message: T) => {
    const k = key(message);
    if (typeof k !== 'string' || k.length === 0) {
      throw new TypeError(
        `keyedProducer: \`key\` returned ${describe(k)}; every message needs its aggregate ID`,
      );
    }
    const named = headers === undefined ? {} : headers(message);
    if (typeof named !== 'object' || named === null) {
      throw new TypeError(`keyedProducer: \`headers\` returned ${describe(named)}; expected an object`);
    }
    const v: unknown = value(message);
    if (typeof v !== 'string' && !(v instanceof Uint8Array)) {
      throw new TypeError(`keyedProducer: \`value\` returned ${describe(v)}; expected text or bytes`);
    }
    return { key: k, value: v, headers: headerList(named) };
  };
  return {
    async send(messages) {
      const list = Array.isArray(messages) ? (messages as readonly T[]) : [messages as T];
      if (list.length === 0) return;
      await send(topic, list.map(record));
    },
  };
}
