import type { KafkaHeaders, KafkaRecord } from '../message';

/** The part of a fetched @platformatic/kafka record batch the adapter reads. */
export interface RecordBatch {
  firstOffset: bigint;
  firstTimestamp: bigint;
  attributes: number;
  lastOffsetDelta: number;
  records: Array<{
    offsetDelta: number;
    timestampDelta: bigint;
    key: Buffer | null;
    value: Buffer | null;
    headers: Array<[Buffer | null, Buffer | null]>;
  }>;
}

/** Batch attribute bit of transaction markers: they take an offset but are no message. */
const CONTROL_BATCH = 1 << 5;

/** The messages of fetched batches from offset `from` on (a batch may start before the offset asked for). */
export function toKafkaRecords(batches: readonly RecordBatch[], from: bigint): KafkaRecord[] {
  const records: KafkaRecord[] = [];
  for (const batch of batches) {
    if ((batch.attributes & CONTROL_BATCH) !== 0) continue;
    for (const record of batch.records) {
      const offset = batch.firstOffset + BigInt(record.offsetDelta);
      if (offset < from) continue;
      records.push({
        offset: offset.toString(),
        key: record.key,
        value: record.value,
        headers: toHeaders(record.headers),
        timestamp: (batch.firstTimestamp + record.timestampDelta).toString(),
      });
    }
  }
  return records;
}

/** The offset after the last batch (control batches included): where the next fetch starts. */
export function nextOffset(batches: readonly RecordBatch[]): bigint | null {
  const last = batches.at(-1);
  return last === undefined ? null : last.firstOffset + BigInt(last.lastOffsetDelta) + 1n;
}

/** Header pairs as kafkajs shapes them: a name seen more than once collects its values in an array. */
function toHeaders(pairs: ReadonlyArray<[Buffer | null, Buffer | null]>): KafkaHeaders {
  const headers: KafkaHeaders = {};
  for (const [name, value] of pairs) {
    if (name === null || value === null) continue;
    const key = name.toString('utf8');
    const seen = headers[key];
    if (seen === undefined) headers[key] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else headers[key] = [seen, value];
  }
  return headers;
}
