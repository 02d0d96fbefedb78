import type { Subscriber } from 'rxjs';
import type { ResolvedDispatchOptions } from '../options';
import { statsLink } from '../stats';
import { DispatchCore } from './dispatch-core';

/**
 * The one way a dispatcher is built, for `keyedDispatch`, `keyedBatchDispatch` and `DispatchRuntime`:
 * the core with the router of its executor's lanes; for batches, the batch router the options bring in
 * front of it, which hands the lanes one batch of a key at a time (a turn counts its messages). The
 * router is made once the source is known, with the failure policy chosen for it (see `chosenPolicy`).
 */
export function createDispatcher<T, K, R>(
  options: ResolvedDispatchOptions<T, K, R>,
  subscriber: Subscriber<R>,
): DispatchCore<T, K, R> {
  const { handling, lanes, threadHandler, throughput } = options;
  const timer = options.stats ? statsLink(options.stats).handlerTimer() : null;
  const work = { threadHandler, throughput, timer };
  return new DispatchCore(options, subscriber, (core, policy) =>
    handling.batches
      ? handling.inFront(
          core,
          (batches) =>
            lanes.router(batches, {
              ...work,
              handle: handling.handle,
              policy: policy && ((h) => handling.withPolicy(policy, h, core)),
              maxPerKey: 1,
              sizeOf: (batch: T[]) => batch.length,
            }),
          lanes.loop,
        )
      : lanes.router(core, {
          ...work,
          handle: handling.handle,
          policy: policy && ((h) => handling.withPolicy(policy, h, core)),
          maxPerKey: options.maxPerKey,
          sizeOf: undefined,
          observer: options.observer,
        }),
  );
}
