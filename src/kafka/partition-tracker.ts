import { RingQueue } from '../internal/ring-queue';
import type { TopicPartition, TopicPartitionOffset } from './adapter';
import { decodeFinished, encodeFinished, type FinishedRun } from './finished-offsets';
import type { KafkaRecord, TrackedKafkaMessage } from './message';

/** Finished entries kept before the tracker's arrays are compacted. */
const COMPACT_AT = 4096;

/**
 * One partition during one assignment: the fetched messages not yet delivered, and every received
 * message's offset in order with whether it has finished, so the commit position is the highest
 * contiguous finished offset + 1 even though messages of different keys finish out of order. The
 * offsets that finished above it go into the commit's metadata, and the ones a previous owner recorded
 * there are skipped when fetched.
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
  /** The offset of the last received message; null before the first. */
  private lastReceived: string | null = null;
  /** Sequence number of the highest finished message; -1 while none has. */
  private highestFinished = -1;
  /**
   * Offset of the lowest message that failed and waits for redelivery; null while none has. The
   * metadata records nothing finished above it (see `fail`).
   */
  private lowestFailed: bigint | null = null;
  /** Offsets a previous owner recorded as finished, not yet passed by fetching: [from, to), in order. */
  private inherited: Array<{ from: bigint; to: bigint }> = [];
  /**
   * Waiting for the partition's commit metadata (what to skip): fetched batches wait in `pending` and
   * nothing is delivered meanwhile.
   */
  loading = false;
  /** Batches fetched while `loading`. */
  pending: Array<readonly KafkaRecord[]> = [];
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
    this.lastReceived = offset;
    this.offsets.push(offset);
    this.finished.push(false);
    return this.base + this.offsets.length - 1;
  }

  /** Takes in the previous owner's commit (read back on assignment): its finished offsets are skipped. */
  inherit(offset: string | null, metadata: string | null): void {
    if (offset === null) return;
    const base = BigInt(offset);
    this.inherited = decodeFinished(metadata, offset).map(({ from, to }) => ({
      from: base + BigInt(from),
      to: base + BigInt(to),
    }));
  }

  /** Whether the record at `offset` already finished under a previous owner. Offsets come in order. */
  skips(offset: string): boolean {
    if (this.inherited.length === 0) return false;
    const at = BigInt(offset);
    while (this.inherited.length > 0 && this.inherited[0].to <= at) this.inherited.shift();
    return this.inherited.length > 0 && this.inherited[0].from <= at;
  }

  /** Marks the message numbered `seq` finished and advances the contiguous prefix. */
  finish(seq: number): void {
    if (seq > this.highestFinished) this.highestFinished = seq;
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

  /**
   * The message numbered `seq` failed and is left for redelivery: it stays unfinished, and the commit
   * metadata stops below it. Its key's later messages may finish meanwhile; a next owner that skipped
   * them would run the failed one after them. Without knowing keys, everything above it is handled again
   * after a restart or a rebalance, as with a plain commit.
   */
  fail(seq: number): void {
    const offset = BigInt(this.offsets[seq - this.base]);
    if (this.lowestFailed === null || offset < this.lowestFailed) this.lowestFailed = offset;
  }

  /** The position to commit (the first unfinished offset), or null when nothing has finished. */
  position(): string | null {
    if (this.lastFinished !== null) return (BigInt(this.lastFinished) + 1n).toString();
    return this.highestFinished >= 0 ? this.offsets[this.head] : null;
  }

  /**
   * The position to commit, with metadata listing the offsets above it that finished (within
   * `metadataMaxBytes`; none when 0), or null when nothing has finished.
   */
  commitPoint(metadataMaxBytes: number): TopicPartitionOffset | null {
    const offset = this.position();
    if (offset === null) return null;
    const point: TopicPartitionOffset = { topic: this.topic, partition: this.partition, offset };
    if (metadataMaxBytes > 0) {
      const metadata = encodeFinished(this.finishedAbove(BigInt(offset)), metadataMaxBytes, offset);
      if (metadata !== undefined) point.metadata = metadata;
    }
    return point;
  }

  /** Runs of finished offsets above `position`, counted from it, below the lowest failed message. */
  private finishedAbove(position: bigint): FinishedRun[] {
    const runs = this.finishedRuns(position);
    if (this.lowestFailed === null) return runs;
    const limit = Number(this.lowestFailed - position);
    const kept: FinishedRun[] = [];
    for (const run of runs) {
      if (run.from >= limit) break;
      kept.push(run.to <= limit ? run : { from: run.from, to: limit });
    }
    return kept;
  }

  /** Runs of finished offsets above `position`, counted from it: received ones, then inherited ones. */
  private finishedRuns(position: bigint): FinishedRun[] {
    const runs: FinishedRun[] = [];
    let run: FinishedRun | null = null;
    const last = Math.min(this.highestFinished - this.base, this.offsets.length - 1);
    for (let i = this.head; i <= last; i++) {
      if (!this.finished[i]) {
        run = null;
        continue;
      }
      const at = Number(BigInt(this.offsets[i]) - position);
      // Consecutive received messages with none unfinished between: offsets between them do not exist.
      if (run === null) runs.push((run = { from: at, to: at + 1 }));
      else run.to = at + 1;
    }
    const received = this.lastReceived === null ? position : BigInt(this.lastReceived) + 1n;
    for (const { from, to } of this.inherited) {
      // The committed offset itself is unfinished by definition: runs start above it.
      const start = Math.max(Number((from > received ? from : received) - position), 1);
      const end = Number(to - position);
      if (end <= start) continue;
      const previous = runs[runs.length - 1];
      if (previous !== undefined && previous.to >= start) previous.to = Math.max(previous.to, end);
      else runs.push({ from: start, to: end });
    }
    return runs;
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
