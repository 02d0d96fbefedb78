import { Observable, type OperatorFunction } from 'rxjs';
import { createDispatcher } from './dispatch/create-dispatcher';
import { throwAll } from './dispatch/dispatch-core';
import { type KeyedDispatchOptions, type ResolvedDispatchOptions, resolveDispatchOptions } from './options';

/**
 * Dispatches each message into a mailbox of its key: one message at a time per key, in receive order,
 * in parallel across keys, on the lanes of an executor, with at most `maxInFlight` unfinished messages.
 * Emits every value the handlers emit; completes when the source has completed and every handler has.
 *
 * Put it directly after a receiver (`fromAsyncIterable`, `LocalBus.receive()`, a transport) to pull
 * with backpressure and settle (acknowledge) each message after its handler completes.
 */
export function keyedDispatch<T, K, R>(options: KeyedDispatchOptions<T, K, R>): OperatorFunction<T, R> {
  return dispatchOperator(resolveDispatchOptions(options));
}

/** The operator of resolved options: one dispatcher per subscription. */
export function dispatchOperator<T, K, R>(
  resolved: ResolvedDispatchOptions<T, K, R>,
): OperatorFunction<T, R> {
  return (source) =>
    new Observable<R>((subscriber) => {
      const dispatcher = createDispatcher(resolved, subscriber);
      // Registered before starting: a synchronous source can make a downstream `take` unsubscribe
      // while `start` is still on the stack, and that must stop the dispatcher right there.
      subscriber.add(() => throwAll(dispatcher.teardown()));
      dispatcher.start(source);
    });
}
