import type { Routed, Router } from '../dispatch/router';
import type { PolicyWrap } from '../failure-policy';
import { sharedSlot } from '../internal/shared-slot';
import type { ThreadHandler } from './handler';
import type { ThreadExecutor } from './thread-executor';

/**
 * What the dispatcher core needs of thread lanes, reached through the objects that bring them (a
 * `ThreadExecutor`, a `threadHandler`) rather than through imports: the thread stack (worker_threads,
 * the worker script) loads only when thread lanes are used. Shared slots, so the executor and handler of
 * another copy of the library (its CommonJS build beside the ESM one) are recognised too.
 */
const lanes = sharedSlot<ThreadLanesAccess>('ThreadExecutor.lanes');
const sharedExecutors = sharedSlot<() => ThreadExecutor>('threadHandler.sharedExecutor');

/** A `ThreadExecutor`'s side that dispatchers use, kept off its public members. */
export interface ThreadLanesAccess {
  /** True for `ThreadExecutor.shared`, which nobody closes. */
  readonly shared: boolean;
  /** The router of one dispatcher on these lanes, with the failure policy around its handler, if any. */
  router<T, K, R>(
    dispatcher: Routed<T, K, R>,
    handler: ThreadHandler<unknown, unknown>,
    throughput: number,
    maxPerKey: number,
    policy: PolicyWrap<T, K> | undefined,
  ): Router<T, K>;
}

/** Gives `executor` its lanes' access (not enumerable: the public object shows none of it). */
export function attachLanes(executor: ThreadExecutor, access: ThreadLanesAccess): void {
  lanes.attach(executor, access);
}

export function isThreadExecutor(value: unknown): value is ThreadExecutor {
  return lanes.of(value) !== undefined;
}

export function lanesAccessOf(executor: ThreadExecutor): ThreadLanesAccess {
  return lanes.of(executor) as ThreadLanesAccess;
}

/** Gives a thread handler the way to the shared executor, used when a dispatch names no executor. */
export function attachSharedExecutor(handler: object, shared: () => ThreadExecutor): void {
  sharedExecutors.attach(handler, shared);
}

export function sharedExecutorOf(handler: ThreadHandler<unknown, unknown>): ThreadExecutor {
  return (sharedExecutors.of(handler) as () => ThreadExecutor)();
}
