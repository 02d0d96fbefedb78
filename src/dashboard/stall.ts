import { intakeBatch } from '../stats';

/**
 * In-flight count above which intake has stopped: a dispatcher asks its receiver for more only once a
 * batch (`intakeBatch`) is free, so a window holding more than `maxInFlight − batch` takes nothing in
 * until it drains below. The gauge marks it.
 */
export function stallThreshold(maxInFlight: number): number {
  return maxInFlight - intakeBatch(maxInFlight);
}
