import { RingQueue } from '../internal/ring-queue';
import type { TopicPartition } from './adapter';
import type { TrackedKafkaMessage } from './message';

/** Finished entries kept before the tracker's arrays are compacted. */
const COMPACT_AT = 4096;

/**
 * One partition during one assignment: the fetched messages not yet delivered, and every received
 * message's offset in order with whether it has finished, so the commit position is the highest
 * contiguous finished offset + 1 even though messages of different keys finish out of order.
 */
export class PartitionTracker implements TopicPartition {
  /** Fetched and not yet delivered (no demand yet), in offset order. */
  readonly buffer = new RingQueue<TrackedKafkaMessage>();
  /** Offsets of received messages from the first unfinished one on, in order. */
  private offsets: string[] = [];
  /** Whether each entry of `offsets` has finished. */
  private finished: boolean[] = [];
  /** Index in `offsets` of the first unfinished message. */
  private head = 0;
  /** Sequence number of `offsets[0]`: messages are numbered as they are received. */
  private base = 0;
  /** Offset of the last message of the finished contiguous prefix; null while none has finished. */
  private lastFinished: string | null = null;
  /** Delivered and not yet settled or discarded: what a revoke waits for. */
  inFlight = 0;
  /** Fetching of this partition is paused: its buffer is full, or it is held. */
  paused = false;
  /**
   * Delivered messages of this partition waiting outside the dispatcher's window (their key at its
   * share). While there are any, the partition is held: nothing more of it is delivered.
   */
  parked = 0;
  /** In the receiver's round of partitions with buffered messages. */
  queued = false;
  /** Revoked (or closing): nothing more is delivered from it. */
  revoked = false;
  /** Resolved when `inFlight` reaches zero after a revoke. */
  private idleWaiters: Array<() => void> = [];

  constructor(
    readonly topic: string,
    readonly partition: number,
  ) {}

  /** Registers a fetched message; returns its sequence number in this tracker. */
  receive(offset: string): number {
    this.offsets.push(offset);
    this.finished.push(false);
    return this.base + this.offsets.length - 1;
  }

  /** Marks the message numbered `seq` finished and advances the contiguous prefix. */
  finish(seq: number): void {
    this.finished[seq - this.base] = true;
    const finished = this.finished;
    let head = this.head;
    while (head < finished.length && finished[head]) head++;
    if (head === this.head) return;
    this.lastFinished = this.offsets[head - 1];
    this.head = head;
    if (head >= COMPACT_AT && head * 2 >= finished.length) {
      this.offsets = this.offsets.slice(head);
      this.finished = finished.slice(head);
      this.base += head;
      this.head = 0;
    }
  }

  /** The position to commit (next offset to consume), or null when nothing has finished. */
  position(): string | null {
    return this.lastFinished === null ? null : (BigInt(this.lastFinished) + 1n).toString();
  }

  /** A delivered message settled or was discarded. */
  release(): void {
    if (--this.inFlight === 0 && this.idleWaiters.length > 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  /** Resolves once no delivered message of this tracker is running. */
  idle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
