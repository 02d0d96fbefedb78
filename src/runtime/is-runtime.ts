import type { DispatchRuntime } from './dispatch-runtime';

/**
 * Whether `value` is a `DispatchRuntime`, told by its method: not `instanceof`, which would keep the
 * class in every bundle that only reads one (and miss one of another copy of the library).
 */
export function isDispatchRuntime(value: unknown): value is DispatchRuntime {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Partial<DispatchRuntime>).componentStats === 'function'
  );
}
