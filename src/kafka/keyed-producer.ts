import { describe, functionOption, optionsObject } from '../validate';
import type { KafkaHeaders } from './message';

/**
 * The records a kafkajs `Producer.send` takes, with their bytes typed by shape: `Uint8Array`, of which
 * Node's `Buffer` is one. `keyedProducer` sends string keys, and values and header values as strings
 * or `Buffer`s.
 */
export interface KafkaJsProducerRecord {
  /** The topic to send to. */
  topic: string;
  /** The records, in order. */
  messages: Array<{
    /** The record key: the partition is chosen by it. */
    key?: string | Uint8Array | null;
    /** The record value; `null` is a tombstone. */
    value: string | Uint8Array | null;
    /** Record headers. */
    headers?: KafkaHeaders<Uint8Array>;
  }>;
}

/** The part of a kafkajs `Producer` the helper uses (structural; any client with this `send` fits). */
export interface KafkaJsProducer {
  // A method, so its parameter is compared both ways: kafkajs's own `send`, whose records are these
  // with `Buffer` for `Uint8Array`, fits.
  /** Sends records to a topic; resolves once the broker has them. */
  send(record: KafkaJsProducerRecord): Promise<unknown>;
}

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
 * A producer helper that keys every record by its aggregate ID. With the client's default partitioner
 * (murmur2 of the key, as in the Java client) each key stays in one partition, so the consumer group
 * delivers an aggregate's messages in order to one member, and `keyedDispatch` keeps that order per key.
 * Use an idempotent producer (`idempotent: true`): retries then never duplicate or reorder records.
 */
export function keyedProducer<T>(
  producer: KafkaJsProducer,
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
  const record = (message: T) => {
    const k = key(message);
    if (typeof k !== 'string' || k.length === 0) {
      throw new TypeError(
        `keyedProducer: \`key\` returned ${describe(k)}; every message needs its aggregate ID`,
      );
    }
    return headers === undefined
      ? { key: k, value: asBuffer(value(message)) }
      : { key: k, value: asBuffer(value(message)), headers: headersAsBuffers(headers(message)) };
  };
  return {
    async send(messages) {
      const list = Array.isArray(messages) ? (messages as readonly T[]) : [messages as T];
      if (list.length === 0) return;
      await producer.send({ topic, messages: list.map(record) });
    },
  };
}

/**
 * kafkajs writes only a `Buffer` as bytes, any other typed array as its text ("1,2,3"): such an array
 * goes as a `Buffer` over the same memory.
 */
function asBuffer<V>(bytes: V): V | Buffer {
  return ArrayBuffer.isView(bytes) && !Buffer.isBuffer(bytes)
    ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    : bytes;
}

/** The headers with their typed arrays as `Buffer`s (see `asBuffer`). */
function headersAsBuffers<H>(headers: H): H {
  if (typeof headers !== 'object' || headers === null) return headers;
  const sent: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    sent[name] = Array.isArray(value) ? value.map(asBuffer) : asBuffer(value);
  }
  return sent as H;
}
