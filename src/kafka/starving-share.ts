import type { PartitionTracker } from './partition-tracker';

/**
 * Whether `candidate` (the ready partition with the fewest messages in flight) is to take no more of the
 * window for now, keeping the free places for starving partitions: fetched (not paused) and behind
 * (their latest batch ended below the high watermark), with their buffer empty until their next fetch
 * returns. Without it, a backlog beside them takes every free place meanwhile, and a slow one holds them
 * long after the starving partitions' records arrived (its messages wait behind their few busy keys).
 * `candidate` may take up to an equal share of `window` among the partitions with a backlog or
 * starving; with none starving, as much as it gets.
 *
 * Cheap in the usual case: the partitions are counted only when `candidate` holds at least an equal
 * share among all of them.
 */
export function keepsForStarving(
  candidate: PartitionTracker,
  partitions: ReadonlyMap<string, PartitionTracker>,
  window: number,
): boolean {
  if (candidate.inFlight * partitions.size < window) return false;
  let starving = 0;
  let sharing = 0;
  for (const tracker of partitions.values()) {
    if (tracker.revoked || tracker.parked > 0) continue;
    if (tracker.buffer.size > 0) sharing++;
    else if (tracker.behind && !tracker.paused) {
      starving++;
      sharing++;
    }
  }
  return starving > 0 && candidate.inFlight * sharing >= window;
}
