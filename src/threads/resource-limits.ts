import { describe } from '../validate';

/**
 * V8 heap limits of a thread, as `worker_threads` takes them (declared here so that the package's types
 * compile without `@types/node`). Node's default for each one not given.
 */
export interface ThreadResourceLimits {
  /** Largest size of the heap space for recently created objects, in MB. A number > 0. */
  maxYoungGenerationSizeMb?: number;
  /** Largest size of the main heap, in MB. A number ≥ 16: with less, V8 may not start the thread's isolate. */
  maxOldGenerationSizeMb?: number;
  /** Size of the range preallocated for generated code, in MB. A number ≥ 8: with less, V8 may not start the thread's isolate. */
  codeRangeSizeMb?: number;
  /** Default stack size of the thread, in MB. A number ≥ 1: with less, Node may not boot the thread. */
  stackSizeMb?: number;
}

/**
 * The least of each limit a thread safely starts with. Below these V8 or Node fail while the thread
 * boots, and on some Node versions that failure takes down the whole process (V8's "out of memory
 * during deserialization", a stack overflow in Node's bootstrap) instead of only the thread. Each floor
 * is at least twice the least with which a thread lane booted and ran a handler on Node 22 and 24.
 */
const FLOORS: Readonly<Record<keyof ThreadResourceLimits, number>> = {
  maxYoungGenerationSizeMb: 0,
  maxOldGenerationSizeMb: 16,
  codeRangeSizeMb: 8,
  stackSizeMb: 1,
};

/** `resourceLimits` checked field by field: each a finite number at least its floor (> 0 where none). */
export function resourceLimitsOf(limits: unknown): ThreadResourceLimits | undefined {
  if (limits === undefined) return undefined;
  if (limits === null || typeof limits !== 'object') {
    throw new TypeError(
      `ThreadExecutor: expected \`resourceLimits\` to be an object, got ${describe(limits)}`,
    );
  }
  for (const [field, floor] of Object.entries(FLOORS)) {
    const value = (limits as Record<string, unknown>)[field];
    if (value === undefined) continue;
    const valid =
      typeof value === 'number' && Number.isFinite(value) && (floor === 0 ? value > 0 : value >= floor);
    if (!valid) {
      const range = floor === 0 ? '> 0' : `>= ${floor} (the least a thread safely starts with)`;
      throw new TypeError(
        `ThreadExecutor: expected \`resourceLimits.${field}\` to be a number ${range}, got ${describe(value)}`,
      );
    }
  }
  return limits as ThreadResourceLimits;
}
