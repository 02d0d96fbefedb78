import type { MetricsSnapshot } from '../metrics';

/**
 * In-flight count above which intake has stopped: a dispatcher asks its receiver for more only once a
 * batch of `max(1, floor(maxInFlight / 16))` is free (`src/options.ts`), so a window holding more than
 * `maxInFlight − batch` takes nothing in until it drains below.
 */
export function stallThreshold(maxInFlight: number): number {
  return maxInFlight - Math.max(1, Math.floor(maxInFlight / 16));
}

/**
 * The key stalling the window, or null: the window is above its stall threshold (intake has stopped)
 * and one key holds at least half of what is in flight. Every other key waits for that key's handler.
 */
export function stalledBy(
  snapshot: Pick<MetricsSnapshot, 'inFlight' | 'maxInFlight' | 'hotKeys'>,
): { key: unknown; backlog: number } | null {
  if (snapshot.maxInFlight === 0 || snapshot.inFlight <= stallThreshold(snapshot.maxInFlight)) return null;
  const top = snapshot.hotKeys[0];
  return top !== undefined && top.backlog * 2 >= snapshot.inFlight ? top : null;
}
