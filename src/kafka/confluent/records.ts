import type { KafkaBytes, KafkaHeaders, KafkaRecord } from '../message';
import type { RdMessage } from './client';

/** One partition's messages of a `consume` call, the offset of its last, and their keys' and values' bytes. */
export interface PartitionBatch {
  topic: string;
  partition: number;
  records: KafkaRecord[];
  last: number;
  bytes: number;
}

/**
 * The messages of one `consume` call by partition, each partition's in offset order (as librdkafka
 * returns them), those of partitions `keeps` refuses left out.
 */
export function byPartition(
  messages: readonly RdMessage[],
  keeps: (topic: string, partition: number) => boolean,
): Map<string, PartitionBatch> {
  const batches = new Map<string, PartitionBatch>();
  for (const message of messages) {
    const id = `${message.topic}:${message.partition}`;
    let batch = batches.get(id);
    if (batch === undefined) {
      if (!keeps(message.topic, message.partition)) continue;
      batch = {
        topic: message.topic,
        partition: message.partition,
        records: [],
        last: message.offset,
        bytes: 0,
      };
      batches.set(id, batch);
    }
    const record = toKafkaRecord(message);
    batch.records.push(record);
    batch.last = message.offset;
    batch.bytes += (record.key?.length ?? 0) + (message.value?.length ?? 0);
  }
  return batches;
}

function toKafkaRecord(message: RdMessage): KafkaRecord {
  const record: KafkaRecord = {
    offset: String(message.offset),
    key: toBytes(message.key),
    value: message.value,
    timestamp: String(message.timestamp ?? -1),
  };
  if (message.headers !== undefined && message.headers.length > 0)
    record.headers = toHeaders(message.headers);
  return record;
}

/** librdkafka hands a key over as bytes; a string key (the client's option) is made bytes too. */
function toBytes(key: RdMessage['key']): KafkaBytes | null {
  if (key === undefined || key === null) return null;
  return typeof key === 'string' ? Buffer.from(key) : key;
}

/** Headers come as a list of one-entry objects; a name seen more than once gets an array. */
function toHeaders(list: NonNullable<RdMessage['headers']>): KafkaHeaders {
  const headers: KafkaHeaders = {};
  for (const entry of list) {
    for (const [name, value] of Object.entries(entry)) {
      const before = headers[name];
      if (before === undefined) headers[name] = value;
      else if (Array.isArray(before)) before.push(value);
      else headers[name] = [before, value];
    }
  }
  return headers;
}
