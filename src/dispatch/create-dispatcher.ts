import type { Subscriber } from 'rxjs';
import { type KeyedExecutor, lanesOf } from '../executor';
import type { ResolvedDispatchOptions } from '../options';
import { statsLink } from '../stats';
import { lanesAccessOf } from '../threads/thread-access';
import type { ThreadExecutor } from '../threads/thread-executor';
import { DispatchCore } from './dispatch-core';
import { EventLoopRouter } from './event-loop-router';

/**
 * The one way a dispatcher is built, for `keyedDispatch` and for `DispatchRuntime`: the core with the
 * router of the handler's lane kind (the options were resolved, so handler and executor match).
 */
export function createDispatcher<T, K, R>(
  options: ResolvedDispatchOptions<T, K, R>,
  subscriber: Subscriber<R>,
): DispatchCore<T, K, R> {
  const { executor, threadHandler, throughput } = options;
  if (threadHandler !== undefined) {
    const lanes = lanesAccessOf(executor as ThreadExecutor);
    return new DispatchCore(options, subscriber, executor, (core) =>
      lanes.router<T, K, R>(core, threadHandler, throughput, options.maxPerKey),
    );
  }
  const lanes = lanesOf(executor as KeyedExecutor);
  const timer = options.stats ? statsLink(options.stats).handlerTimer() : null;
  return new DispatchCore(
    options,
    subscriber,
    executor,
    (core) => new EventLoopRouter<T, K, R>(core, lanes, options.handle, throughput, options.maxPerKey, timer),
  );
}
