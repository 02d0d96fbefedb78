import type { DispatchMetrics } from './dispatch-metrics';

/**
 * True for a `DispatchMetrics`, told by its methods rather than `instanceof`: each subpath entry of the
 * CommonJS build carries its own copy of the classes it imports, so a `DispatchMetrics` made with
 * `keyed-dispatch` is not an instance of the copy inside `keyed-dispatch/dashboard`.
 */
export function isDispatchMetrics(value: unknown): value is DispatchMetrics {
  const candidate = value as Partial<DispatchMetrics> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.read === 'function' &&
    typeof candidate.snapshots === 'function' &&
    typeof candidate.onHandlerDuration === 'function'
  );
}
