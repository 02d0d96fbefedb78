/**
 * A record's bytes as the Kafka clients hand them over: Node `Buffer`s at run time, typed by their shape
 * so a project compiles without Node's types. `toString('utf8')` reads them as text, as a `Buffer` does
 * (`TextDecoder` works too); any `Uint8Array` fits where one is expected (a record built in a test).
 */
export interface KafkaBytes extends Uint8Array {
  /** The bytes as text in `encoding` (a Node `Buffer` encoding; default `'utf8'`). */
  toString(encoding?: string): string;
}

/** One Kafka record as the receiver delivers it to `keyedDispatch`. */
export interface KafkaMessage {
  /** The topic the record was read from. */
  readonly topic: string;
  /** Its partition within the topic. */
  readonly partition: number;
  /** The record's offset (a 64-bit integer, as a decimal string). */
  readonly offset: string;
  /** The record's key (`null` when it has none); `kafkaKey` reads it as text. */
  readonly key: KafkaBytes | null;
  /** The record's payload (`null` for a tombstone). */
  readonly value: KafkaBytes | null;
  /** The record's headers. */
  readonly headers: KafkaHeaders;
  /** Milliseconds since the epoch, as a decimal string. */
  readonly timestamp: string;
}

/**
 * Record headers by name, as the Kafka client gives them (a name seen more than once has an array).
 * `Bytes` is what a header value's bytes are: `KafkaBytes` on a received record, any `Uint8Array` on one
 * to send.
 */
export type KafkaHeaders<Bytes extends Uint8Array = KafkaBytes> = Record<
  string,
  Bytes | string | Array<Bytes | string> | undefined
>;

/** A fetched record as an adapter hands it over (before it is tied to a partition's tracker). */
export interface KafkaRecord {
  /** The record's offset (a 64-bit integer, as a decimal string). */
  offset: string;
  /** The record's key, `null` when it has none. */
  key: KafkaBytes | null;
  /** The record's payload, `null` for a tombstone. */
  value: KafkaBytes | null;
  /** The record's headers, when it has any. */
  headers?: KafkaHeaders;
  /** Milliseconds since the epoch, as a decimal string. */
  timestamp: string;
}

/**
 * The message's key as a UTF-8 string: a ready `key` for `keyedDispatch`. Throws a `TypeError` for a
 * record without a key (it has no aggregate to be ordered within): the record is that message's failure
 * — its failure policy's dead letter gets it, or, without one, it is left for redelivery and the output
 * errors.
 */
export function kafkaKey(message: KafkaMessage): string {
  if (message.key === null) {
    throw new TypeError(
      `kafkaKey: the record at ${message.topic}/${message.partition}@${message.offset} has no key (null)`,
    );
  }
  return message.key.toString('utf8');
}
