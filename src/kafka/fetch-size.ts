/**
 * Bytes a fetch asks of each partition when the client is given no size: about `prefetch` records of
 * `FETCH_BYTES_PER_RECORD`, within `MIN_FETCH_BYTES`–`MAX_FETCH_BYTES`. A fetch response lands whole
 * in its partition's buffer, so its size, not the window, bounds what a backlog holds in memory: at the
 * clients' own 1 MiB a partition of small records brings tens of thousands of them at once. The broker
 * returns a response's first record batch whole even when it is larger, so larger records still come,
 * fewer a fetch.
 */
export function partitionFetchBytes(prefetch: number): number {
  return Math.min(MAX_FETCH_BYTES, Math.max(MIN_FETCH_BYTES, prefetch * FETCH_BYTES_PER_RECORD));
}

/** What a small record takes in a fetch response, batch overhead shared, in bytes. */
export const FETCH_BYTES_PER_RECORD = 32;
/**
 * The least asked of a partition: a few small producer batches (a larger first batch comes whole). No
 * more: what a fetch brings stays live until handled, and the heap peaks at a multiple of what is live.
 */
export const MIN_FETCH_BYTES = 4096;
/** The most asked of a partition: the clients' own default. */
export const MAX_FETCH_BYTES = 1_048_576;
