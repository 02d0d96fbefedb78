import type { OperatorFunction } from 'rxjs';
import { BatchRouter } from './dispatch/batch-router';
import { type Handle, withBatchPolicy } from './failure-policy';
import { dispatchOperator } from './keyed-dispatch';
import {
  DISPATCH_OPTIONS,
  type KeyedBatchDispatchOptions,
  policyOption,
  type ResolvedDispatchOptions,
  resolveShared,
} from './options';
import { integerOption, optionsObject } from './validate';

/**
 * `keyedDispatch` for handlers that pay per call rather than per message (a store's bulk upsert, an
 * aggregate appending events, a ledger posting entries): the handler gets the queued messages of one
 * key at once, in receive order, up to `maxBatch` — a batch never mixes keys and never waits to fill.
 * Per-key order, the window and each key's share hold as in `keyedDispatch`, counted in messages; a
 * key's next batch starts after its previous batch completed; each message is settled (and so
 * acknowledged by its receiver) when its batch completes. With `failurePolicy`, a failed batch is
 * retried, then taken apart so that only the messages that keep failing are dead-lettered.
 *
 * An operator of its own rather than an option of `keyedDispatch`, so that the handler's parameter is
 * exactly `T[]` (and a thread handler's module exports a function of arrays), with no overload or
 * union to narrow.
 */
export function keyedBatchDispatch<T, K, R>(
  options: KeyedBatchDispatchOptions<T, K, R>,
): OperatorFunction<T, R> {
  return dispatchOperator(resolveBatchDispatchOptions(options));
}

/** Every option of `keyedBatchDispatch`; any other key is refused. */
const BATCH_DISPATCH_OPTIONS = [...DISPATCH_OPTIONS, 'maxBatch'] as const;

/** As `resolveDispatchOptions`, for `keyedBatchDispatch`: the handler takes per-key batches. */
function resolveBatchDispatchOptions<T, K, R>(
  options: KeyedBatchDispatchOptions<T, K, R>,
  owner = 'keyedBatchDispatch',
): ResolvedDispatchOptions<T, K, R> {
  optionsObject(owner, options, BATCH_DISPATCH_OPTIONS);
  return resolveShared(owner, options, policyOption(owner, options.failurePolicy), (handle, maxPerKey) => {
    const maxBatch = integerOption(
      owner,
      'maxBatch',
      options.maxBatch,
      Math.min(64, maxPerKey),
      1,
      maxPerKey,
      options.maxPerKey === undefined ? '`maxPerKey`, by default a quarter of `maxInFlight`' : '`maxPerKey`',
    );
    return {
      batches: true,
      handle: ownArrayPerCall(handle as Handle<T[], K, R>),
      withPolicy: withBatchPolicy,
      inFront: (dispatcher, lanes, loop) => new BatchRouter<T, K, R>(dispatcher, maxBatch, lanes, loop),
    };
  });
}

/**
 * The handler gets a copy of the batch on every call: the array it is typed to take (`T[]`) may be
 * consumed, sorted or kept, while settlement and the failure policy go on walking the dispatcher's own.
 * (On thread lanes the batch crosses by copy; this handle is never called there.)
 */
function ownArrayPerCall<T, K, R>(handle: Handle<T[], K, R>): Handle<T[], K, R> {
  return (batch, context) => handle(batch.slice(), context);
}
