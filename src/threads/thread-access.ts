import type { Routed, Router } from '../dispatch/router';
import type { ThreadHandler } from './handler';
import type { ThreadExecutor } from './thread-executor';

/**
 * What the dispatcher core needs of thread lanes, reached through the objects that bring them (a
 * `ThreadExecutor`, a `threadHandler`) rather than through imports: the thread stack (worker_threads,
 * the worker script) loads only when thread lanes are used. Registered symbols, so the executor and
 * handler of another copy of the library (its CommonJS build beside the ESM one) are recognised too;
 * versioned as the event-loop executor's lanes are (see `executor.ts`).
 */
const LANES = Symbol.for('keyed-dispatch.ThreadExecutor.lanes@1');
const SHARED_EXECUTOR = Symbol.for('keyed-dispatch.threadHandler.sharedExecutor@1');

/** A `ThreadExecutor`'s side that dispatchers use, kept off its public members. */
export interface ThreadLanesAccess {
  /** True for `ThreadExecutor.shared`, which nobody closes. */
  readonly shared: boolean;
  /** The router of one dispatcher on these lanes. */
  router<T, K, R>(
    dispatcher: Routed<T, K, R>,
    handler: ThreadHandler<unknown, unknown>,
    throughput: number,
    maxPerKey: number,
  ): Router<T, K>;
}

interface WithLanes {
  [LANES]?: ThreadLanesAccess;
}

interface WithSharedExecutor {
  [SHARED_EXECUTOR]?: () => ThreadExecutor;
}

/** Gives `executor` its lanes' access (not enumerable: the public object shows none of it). */
export function attachLanes(executor: ThreadExecutor, access: ThreadLanesAccess): void {
  Object.defineProperty(executor, LANES, { value: access });
}

export function isThreadExecutor(value: unknown): value is ThreadExecutor {
  return typeof value === 'object' && value !== null && (value as WithLanes)[LANES] !== undefined;
}

export function lanesAccessOf(executor: ThreadExecutor): ThreadLanesAccess {
  return (executor as WithLanes)[LANES] as ThreadLanesAccess;
}

/** Gives a thread handler the way to the shared executor, used when a dispatch names no executor. */
export function attachSharedExecutor(handler: object, shared: () => ThreadExecutor): void {
  Object.defineProperty(handler, SHARED_EXECUTOR, { value: shared });
}

export function sharedExecutorOf(handler: ThreadHandler<unknown, unknown>): ThreadExecutor {
  return ((handler as WithSharedExecutor)[SHARED_EXECUTOR] as () => ThreadExecutor)();
}
