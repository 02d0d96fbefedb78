import type { PartitionTracker } from './partition-tracker';

/**
 * Decides how long partitions whose buffers filled hold the client's fetching
 * (`KafkaConsumerListener.batch`). A full partition holds it only while no other partition flows (none
 * still fetched brought records since the full one's previous batch), and only until the first held
 * partition has room again, a paused one resumes, or records of another partition arrive. The full
 * ones stay paused meanwhile, so fetching goes on with the partitions that have room: fetches of
 * flowing partitions return as soon as records are there, and a resumed partition is fetched at once,
 * not after a long poll of quiet ones. A slowly draining partition thus holds no other back to its pace.
 */
export class FetchHold {
  /** Partitions holding fetching, each until fetching may go on. */
  private readonly holding = new Set<PartitionTracker>();
  /** Batches so far: each partition's latest one is numbered in `batchAt`, a flowing one in `flowAt`. */
  private batches = 0;
  private readonly batchAt = new WeakMap<PartitionTracker, number>();
  private readonly flowAt = new WeakMap<PartitionTracker, number>();

  /** A batch filled the partition's buffer: it holds fetching, unless another of `live` flows. */
  filled(tracker: PartitionTracker, live: Iterable<PartitionTracker>): void {
    const previous = this.batchAt.get(tracker) ?? 0;
    this.batchAt.set(tracker, ++this.batches);
    for (const other of live) {
      if (other !== tracker && !other.paused && (this.flowAt.get(other) ?? 0) > previous) {
        // A hold from before the batch was served (`loading`) ends here.
        this.holding.delete(tracker);
        tracker.releaseRoom();
        return;
      }
    }
    this.hold(tracker);
  }

  /**
   * A partition's first records, a prefetch of them, wait for its commit metadata: it holds fetching
   * until they are served (`filled` decides then), or a client would fetch its whole backlog meanwhile.
   */
  loading(tracker: PartitionTracker): void {
    this.hold(tracker);
  }

  private hold(tracker: PartitionTracker): void {
    tracker.holdForRoom();
    this.holding.add(tracker);
  }

  /** A batch arrived for a partition with room: fetching goes on, so no full partition holds it. */
  flowed(tracker: PartitionTracker): void {
    this.batchAt.set(tracker, ++this.batches);
    this.flowAt.set(tracker, this.batches);
    this.release();
  }

  /** A partition can be fetched again, or one holding fetching has room: fetching goes on. */
  release(): void {
    for (const tracker of this.holding) tracker.releaseRoom();
    this.holding.clear();
  }
}
