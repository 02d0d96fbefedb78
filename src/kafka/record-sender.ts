import { describe } from '../validate';
import type { KafkaHeaders } from './message';

/**
 * The records a kafkajs `Producer.send` takes, with their bytes typed by shape: `Uint8Array`, of which
 * Node's `Buffer` is one. The helpers send keys, values and header values as `Buffer`s.
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

/**
 * The part of a kafkajs `Producer` the helpers use (structural: any client with this `send`, and no
 * `asStream`, which marks a @platformatic/kafka producer, fits).
 */
export interface KafkaJsProducer {
  // A method, so its parameter is compared both ways: kafkajs's own `send`, whose records are these
  // with `Buffer` for `Uint8Array`, fits.
  /** Sends records to a topic; resolves once the broker has them. */
  send(record: KafkaJsProducerRecord): Promise<unknown>;
}

/**
 * The part of a @platformatic/kafka `Producer` the helpers use (its default one, whose keys, values
 * and headers are bytes: no `serializers`).
 */
export interface PlatformaticProducer {
  // A method, so its parameter is compared both ways: the client's own `send`, whose records are these
  // with `Buffer` for `Uint8Array`, fits.
  /** Sends records, each naming its topic; resolves once the broker acknowledged them (per `acks`). */
  send(options: {
    messages: Array<{
      topic: string;
      key?: Uint8Array;
      value?: Uint8Array;
      headers?: Map<Uint8Array, Uint8Array> | Record<string, Uint8Array>;
    }>;
  }): Promise<unknown>;
  /** The client's stream of records to send: only its presence is used, to tell this producer from kafkajs's. */
  asStream(...args: never[]): unknown;
}

/** A producer of either client: kafkajs's, or @platformatic/kafka's. */
export type KafkaProducer = KafkaJsProducer | PlatformaticProducer;

/** Bytes to send: text goes as UTF-8. */
type Bytes = Uint8Array | string;

/** A record to send, as the helpers build it: its headers in order, a name given more than once repeated. */
export interface OutgoingRecord {
  key: Bytes | null;
  value: Bytes | null;
  headers: ReadonlyArray<readonly [name: string, value: Bytes]>;
}

/** Sends records to `topic`, in order, in one request; resolves once the broker acknowledged them. */
export type SendRecords = (topic: string, records: readonly OutgoingRecord[]) => Promise<void>;

/**
 * The one place that knows how each client takes records. A producer with `asStream` is
 * @platformatic/kafka's (each record names its topic, headers go as a `Map` of bytes, whose distinct
 * `Buffer` keys keep a repeated name); any other producer with a `send` is taken as kafkajs's.
 */
export function recordSender(caller: string, producer: KafkaProducer): SendRecords {
  if (typeof (producer as { send?: unknown } | null)?.send !== 'function') {
    throw new TypeError(
      `${caller}: expected \`producer\` to be a kafkajs or @platformatic/kafka producer (with a \`send\` method), got ${describe(producer)}`,
    );
  }
  if (typeof (producer as Partial<PlatformaticProducer>).asStream === 'function') {
    const platformatic = producer as PlatformaticProducer;
    return async (topic, records) => {
      await platformatic.send({
        messages: records.map((r) => ({
          topic,
          // No key is left out (the client writes it as null); a tombstone's value is sent as null,
          // which the client writes as such, though its types say bytes.
          ...(r.key !== null && { key: asBuffer(r.key) }),
          value: (r.value === null ? null : asBuffer(r.value)) as Uint8Array,
          headers: new Map(r.headers.map(([name, value]) => [Buffer.from(name), asBuffer(value)])),
        })),
      });
    };
  }
  const kafkajs = producer as KafkaJsProducer;
  return async (topic, records) => {
    await kafkajs.send({
      topic,
      messages: records.map((r) => ({
        key: r.key === null ? null : asBuffer(r.key),
        value: r.value === null ? null : asBuffer(r.value),
        headers: kafkajsHeaders(r.headers),
      })),
    });
  };
}

/**
 * Text as UTF-8 bytes, and any typed array as a `Buffer` over the same memory: kafkajs writes only a
 * `Buffer` as bytes (another typed array as its text, "1,2,3"), and @platformatic/kafka only bytes.
 */
function asBuffer(bytes: Bytes): Buffer {
  if (typeof bytes === 'string') return Buffer.from(bytes);
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** kafkajs's headers: by name, a name given more than once with an array of its values. */
function kafkajsHeaders(headers: OutgoingRecord['headers']): Record<string, Buffer | Buffer[]> {
  // No prototype: a header named `__proto__` is a header like any other.
  const byName: Record<string, Buffer | Buffer[]> = Object.create(null);
  for (const [name, value] of headers) {
    const bytes = asBuffer(value);
    const before = byName[name];
    byName[name] =
      before === undefined ? bytes : Array.isArray(before) ? [...before, bytes] : [before, bytes];
  }
  return byName;
}

/** The headers of `KafkaHeaders` form in order, a name with an array repeated once per value. */
export function headerList(
  headers: Record<string, Bytes | ReadonlyArray<Bytes> | undefined>,
): Array<readonly [string, Bytes]> {
  const list: Array<readonly [string, Bytes]> = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value as Bytes]) list.push([name, one]);
  }
  return list;
}
