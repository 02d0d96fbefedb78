import type { Subscriber } from 'rxjs';
import { type KeyedExecutor, lanesOf } from '../executor';
import type { Handle, PolicyWrap } from '../failure-policy';
import type { ResolvedDispatchOptions } from '../options';
import { statsLink } from '../stats';
import { lanesAccessOf } from '../threads/thread-access';
import type { ThreadExecutor } from '../threads/thread-executor';
import { DispatchCore } from './dispatch-core';
import { EventLoopRouter } from './event-loop-router';
import type { Routed, Router } from './router';

/**
 * The one way a dispatcher is built, for `keyedDispatch`, `keyedBatchDispatch` and `DispatchRuntime`:
 * the core with the router of the handler's lane kind (the options were resolved, so handler and
 * executor match); for batches, the batch router the options bring in front of it, which hands it one
 * batch of a key at a time.
 */
export function createDispatcher<T, K, R>(
  options: ResolvedDispatchOptions<T, K, R>,
  subscriber: Subscriber<R>,
): DispatchCore<T, K, R> {
  const { handling } = options;
  return new DispatchCore(options, subscriber, options.executor, (core) =>
    handling.batches
      ? handling.inFront(core, (batches) =>
          // One batch of a key at a time; a turn counts the messages of its batches.
          laneRouter(batches, options, handling.handle, handling.policy, 1, (batch: T[]) => batch.length),
        )
      : laneRouter(core, options, handling.handle, handling.policy, options.maxPerKey, undefined),
  );
}

/**
 * The router of the handler's lane kind for items of type `M` (messages, or batches of them): the one
 * place that decides by lane kind. The failure policy goes around the handler where the handler runs.
 */
function laneRouter<M, K, R>(
  routed: Routed<M, K, R>,
  options: Pick<
    ResolvedDispatchOptions<unknown, K, R>,
    'executor' | 'threadHandler' | 'throughput' | 'stats'
  >,
  handle: Handle<M, K, R>,
  policy: PolicyWrap<M, K> | undefined,
  maxPerKey: number,
  sizeOf: ((item: M) => number) | undefined,
): Router<M, K> {
  const { executor, threadHandler, throughput } = options;
  if (threadHandler !== undefined) {
    return lanesAccessOf(executor as ThreadExecutor).router<M, K, R>(
      routed,
      threadHandler,
      throughput,
      maxPerKey,
      policy,
    );
  }
  const timer = options.stats ? statsLink(options.stats).handlerTimer() : null;
  return new EventLoopRouter<M, K, R>(
    routed,
    lanesOf(executor as KeyedExecutor),
    policy === undefined ? handle : policy(handle),
    throughput,
    maxPerKey,
    timer,
    sizeOf,
  );
}
