import { RingQueue } from '../internal/ring-queue';
import type { KafkaRecord } from './message';
import { type PartitionTracker, TrackedKafkaMessage } from './partition-tracker';

/**
 * A partition's fetched records not yet delivered, in offset order, each with its sequence number in
 * the partition's tracker. The records stay as the client made them: the message `keyedDispatch` gets
 * is made when one is taken, so a record waiting here has no object of its own. Records that wait long
 * outlive the young generation's collections and are promoted, to be freed only by a full one: every
 * object less a waiting record keeps is old garbage the heap does not grow by.
 */
export class RecordBuffer {
  private readonly records = new RingQueue<KafkaRecord>();
  private readonly seqs = new RingQueue<number>();

  constructor(private readonly tracker: PartitionTracker) {}

  /** Records waiting. */
  get size(): number {
    return this.records.size;
  }

  /** Adds a fetched record numbered `seq` by the tracker. */
  push(record: KafkaRecord, seq: number): void {
    this.records.push(record);
    this.seqs.push(seq);
  }

  /** The first waiting record as the message to deliver; the buffer must not be empty. */
  shift(): TrackedKafkaMessage {
    const { topic, partition } = this.tracker;
    const record = this.records.shift() as KafkaRecord;
    return new TrackedKafkaMessage(topic, partition, record, this.tracker, this.seqs.shift() as number);
  }

  /** Drops every waiting record. */
  clear(): void {
    this.records.clear();
    this.seqs.clear();
  }
}
