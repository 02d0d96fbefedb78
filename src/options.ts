import type { ObservableInput } from 'rxjs';
import { type LaneBackend, lanesOfOption } from './dispatch/lanes';
import type { Dispatcher, Router } from './dispatch/router';
import type { LaneLoop } from './engine/lane-loop';
import type { HandlerContext } from './engine/mailbox';
import { KeyedExecutor } from './executor';
import {
  type FailurePolicy,
  type Handle,
  isFailurePolicy,
  type PolicyHost,
  withPolicy,
} from './failure-policy';
import { type MessageObserver, messageObserverOf } from './internal/message-observer';
import { type DispatchStats, intakeBatch, isDispatchStats } from './stats';
import type { ThreadExecutor } from './threads/thread-executor';
import { isThreadHandler, sharedExecutorOf, type ThreadHandler } from './threads/thread-handler';
import { describe, functionOption, integerOption, optionsObject } from './validate';

/**
 * Default parking area: deep enough for a burst in which one key gets tens of thousands of messages
 * more than it can finish (a few MB of references), so a hot key delays only itself.
 */
const DEFAULT_MAX_PARKED = 65_536;

/** Options of `keyedDispatch`. Invalid values throw a `TypeError` naming the option when the operator is created. */
export interface KeyedDispatchOptions<T, K, R> {
  /**
   * Selects a message's key (aggregate ID, account, device). Messages of one key run one at a time in
   * receive order. Must return, synchronously, a value other than `undefined`, `null` or a Promise; keys
   * compare like `Map` keys. A message it fails for fails on its own (see `failurePolicy`).
   */
  key: (message: T) => K;
  /**
   * Handles one message. Returns any `ObservableInput` (Observable, Promise, array, iterable); its values
   * are emitted by the operator, and the key's next message starts only after it completes. What a throw
   * or error does is the `failurePolicy`'s business.
   * On thread lanes, a `threadHandler(module, exportName)` instead: a function in a module the threads load.
   */
  handle: ((message: T, context: HandlerContext<K>) => ObservableInput<R>) | ThreadHandler<T, R>;
  /**
   * The lanes to run on: a `KeyedExecutor` (event-loop lanes) for a function handler, a `ThreadExecutor`
   * (worker threads) for a thread handler. Default: `KeyedExecutor.shared` or `ThreadExecutor.shared`,
   * by the kind of `handle`; each has one lane per available processor.
   */
  executor?: KeyedExecutor | ThreadExecutor;
  /**
   * Unfinished messages (running or queued) this dispatcher holds before it stops asking its receiver
   * for more; more are requested in batches of `max(1, floor(maxInFlight / 16))`. Integer ≥ 1. Default 256.
   */
  maxInFlight?: number;
  /**
   * Unfinished messages one key may hold inside the window (its share), so a hot key cannot fill the
   * window and stall every other key. A key's messages beyond its share wait outside the window, parked
   * in arrival order (they still run in order, after its admitted ones). Integer from 1 to `maxInFlight`.
   * Default `max(1, floor(maxInFlight / 4))` (64 of the default 256).
   */
  maxPerKey?: number;
  /**
   * Messages that may wait parked outside the window, over all keys. The dispatcher asks its receiver
   * only for what it could park if every requested message belonged to a key at its share, so memory
   * stays bounded (`maxInFlight + maxParked` messages held at most): when the parking area is full,
   * intake stops until parked messages enter the window. Size it for the backlog a hot key may build
   * during a burst (its arrival rate beyond what it finishes, times the burst's length): a parking area
   * smaller than that stalls every key again once it fills. Integer ≥ 1. Default `max(65536, maxInFlight)`.
   */
  maxParked?: number;
  /** Messages one key runs in one turn while they complete synchronously, before others on its lane get a turn. Integer ≥ 1. Default 16. */
  throughput?: number;
  /**
   * What happens when a plain (non-pullable) source emits while the window is full: `'buffer'` keeps the
   * messages in arrival order and admits them as the window frees (nothing is lost; memory grows with
   * the excess; `stats.overflow` shows it), `'error'` errors the output with a `WindowOverflowError`.
   * Receivers never outrun the window. Default `'buffer'`.
   */
  onOverflow?: 'buffer' | 'error';
  /** Live counters of this dispatcher (in-flight, live mailboxes, settled, ...). Read them any time. */
  stats?: DispatchStats;
  /**
   * What to do when a handler (or the key selector) fails for a message:
   * - `retryPolicy({ ... })`: retries inside the key's mailbox with backoff, then dead-letters the
   *   message or settles it as failed, and goes on;
   * - `'error'`: errors the output with the error (after tearing everything down), as RxJS operators do.
   *
   * Default: for the messages of a transport receiver (Kafka, Redis Streams, NATS JetStream) and of
   * `LocalBus`, retried in the key's mailbox until they succeed, 100 ms doubling up to 30 s between
   * attempts, each failure logged with `console.error` and nothing acknowledged meanwhile (see
   * docs/failure-policy.md); for any other source (a plain Observable, `fromIterable`,
   * `fromAsyncIterable`), `'error'`.
   */
  failurePolicy?: FailurePolicy<T, K> | 'error';
}

/**
 * Options of `keyedBatchDispatch`: those of `keyedDispatch`, with a handler of batches and `maxBatch`.
 * Invalid values throw a `TypeError` naming the option when the operator is created.
 */
export interface KeyedBatchDispatchOptions<T, K, R>
  extends Omit<KeyedDispatchOptions<T, K, R>, 'handle' | 'failurePolicy'> {
  /**
   * Handles a batch: consecutive messages of one key, in receive order, at most `maxBatch` of them. A
   * batch holds the key's messages admitted by the time it is taken — when the key's previous batch
   * completed, or, for a key with nothing running, at the end of the burst that brought its first
   * message — and never waits for more to come. Returns any `ObservableInput`; its values are emitted by
   * the operator, the key's next batch starts after it completes, and then each message of the batch is
   * settled. What a throw or error does is the `failurePolicy`'s business. On thread lanes, a
   * `threadHandler(module, exportName)` whose function takes an array; the batch crosses as one posting.
   * The array is the handler's own, a fresh one on every call (each retry too): consuming, sorting or
   * keeping it changes nothing for settlement or the failure policy, which use the dispatcher's record.
   */
  handle: ((batch: T[], context: HandlerContext<K>) => ObservableInput<R>) | ThreadHandler<T[], R>;
  /**
   * Most messages in one batch. Integer from 1 to `maxPerKey` (a key never holds more in the window).
   * Default `min(64, maxPerKey)`.
   */
  maxBatch?: number;
  /**
   * What to do when a batch fails: with `retryPolicy({ ... })` a failed batch is retried as a batch;
   * once its attempts are spent, its messages are retried one at a time, in order, each with attempts of
   * its own, so only those that keep failing are dead-lettered and the others are handled; `'error'`
   * errors the output. Default: as `keyedDispatch`'s (a transport receiver's failed batch is retried as
   * a batch until it succeeds; any other source's errors the output).
   */
  failurePolicy?: FailurePolicy<T, K> | 'error';
}

export interface ResolvedDispatchOptions<T, K, R> {
  key: (message: T) => K;
  /** The handler and what goes around it. */
  handling: Handling<T, K, R>;
  /** Set when the handler is a thread handler (then `handling.handle` is never called on this thread). */
  threadHandler: ThreadHandler<unknown, unknown> | undefined;
  /** The lanes of the executor, of the handler's lane kind (thread lanes exactly when `threadHandler` is set). */
  lanes: LaneBackend;
  maxInFlight: number;
  maxPerKey: number;
  maxParked: number;
  batch: number;
  throughput: number;
  onOverflow: 'buffer' | 'error';
  stats: DispatchStats | undefined;
  /** The `failurePolicy` option as given: undefined leaves it to the receiver's default. */
  failurePolicy: FailurePolicy<T, K> | 'error' | undefined;
  /** Told about parking, giving up and waits per message when `traced` installed one; else undefined. */
  observer: MessageObserver<T> | undefined;
}

/**
 * What runs for admitted messages: a handler of one message per call (`keyedDispatch`), or of per-key
 * batches (`keyedBatchDispatch`), which `inFront` makes in front of the lane router it builds with
 * `lanes` (and whose first batches it hands over under `loop`); `withPolicy` puts a failure policy
 * around the handler, where it runs. The batch router comes with the options, so a bundle of
 * `keyedDispatch` alone leaves it out.
 */
export type Handling<T, K, R> =
  | {
      readonly batches: false;
      readonly handle: Handle<T, K, R>;
      readonly withPolicy: <Q>(
        policy: FailurePolicy<T, K>,
        handle: Handle<T, K, Q>,
        host: PolicyHost<T>,
      ) => Handle<T, K, Q>;
    }
  | {
      readonly batches: true;
      readonly handle: Handle<T[], K, R>;
      readonly withPolicy: <Q>(
        policy: FailurePolicy<T, K>,
        handle: Handle<T[], K, Q>,
        host: PolicyHost<T>,
      ) => Handle<T[], K, Q>;
      readonly inFront: (
        dispatcher: Dispatcher<T, K, R>,
        lanes: (dispatcher: Dispatcher<T[], K, R>) => Router<T[], K>,
        loop: LaneLoop,
      ) => Router<T, K>;
    };

/** Every option of `keyedDispatch`; any other key is refused. */
export const DISPATCH_OPTIONS = [
  'key',
  'handle',
  'executor',
  'maxInFlight',
  'maxPerKey',
  'maxParked',
  'throughput',
  'onOverflow',
  'stats',
  'failurePolicy',
] as const satisfies ReadonlyArray<keyof KeyedDispatchOptions<unknown, unknown, unknown>>;

/**
 * Checks `keyedDispatch`'s options and fills in the defaults; `owner` names the caller in errors (a
 * runtime names the component). Handler and executor must be of the same lane kind.
 */
export function resolveDispatchOptions<T, K, R>(
  options: KeyedDispatchOptions<T, K, R>,
  owner = 'keyedDispatch',
): ResolvedDispatchOptions<T, K, R> {
  optionsObject(owner, options, DISPATCH_OPTIONS);
  return resolveShared<T, K, R>(owner, options, policyOption(owner, options.failurePolicy), (handle) => ({
    batches: false,
    handle: handle as Handle<T, K, R>,
    withPolicy,
  }));
}

/** The options both operators share, checked, with the handling `handling` makes of the handler. */
export function resolveShared<T, K, R>(
  owner: string,
  options: Omit<KeyedDispatchOptions<T, K, R>, 'handle' | 'failurePolicy'> & { handle: unknown },
  failurePolicy: FailurePolicy<T, K> | 'error' | undefined,
  handling: (handle: Handle<unknown, K, R>, maxPerKey: number) => Handling<T, K, R>,
): ResolvedDispatchOptions<T, K, R> {
  const maxInFlight = integerOption(owner, 'maxInFlight', options.maxInFlight, 256, 1);
  const onOverflow = options.onOverflow === undefined ? 'buffer' : options.onOverflow;
  if (onOverflow !== 'buffer' && onOverflow !== 'error') {
    throw new TypeError(
      `${owner}: expected \`onOverflow\` to be 'buffer' or 'error', got ${describe(onOverflow)}`,
    );
  }
  const threadHandler = isThreadHandler(options.handle) ? options.handle : undefined;
  const handle = threadHandler
    ? runsInThreads
    : functionOption(owner, 'handle', options.handle as Handle<unknown, K, R>);
  if (options.stats !== undefined && !isDispatchStats(options.stats)) {
    throw new TypeError(
      `${owner}: expected \`stats\` to be a DispatchStats or DispatchMetrics, got ${describe(options.stats)}`,
    );
  }
  const maxPerKey = integerOption(
    owner,
    'maxPerKey',
    options.maxPerKey,
    Math.max(1, Math.floor(maxInFlight / 4)),
    1,
    maxInFlight,
    '`maxInFlight`',
  );
  return {
    key: functionOption(owner, 'key', options.key),
    handling: handling(handle, maxPerKey),
    threadHandler,
    lanes: lanesFor(owner, options.executor, threadHandler),
    maxInFlight,
    maxPerKey,
    maxParked: integerOption(
      owner,
      'maxParked',
      options.maxParked,
      Math.max(DEFAULT_MAX_PARKED, maxInFlight),
      1,
    ),
    batch: intakeBatch(maxInFlight),
    throughput: integerOption(owner, 'throughput', options.throughput, 16, 1),
    onOverflow,
    stats: options.stats,
    failurePolicy,
    observer: messageObserverOf<T>(options),
  };
}

/** Checks the `failurePolicy` option. */
export function policyOption<T, K>(
  owner: string,
  policy: FailurePolicy<T, K> | 'error' | undefined,
): FailurePolicy<T, K> | 'error' | undefined {
  if (policy !== undefined && policy !== 'error' && !isFailurePolicy(policy)) {
    throw new TypeError(
      `${owner}: expected \`failurePolicy\` to be a failure policy (from retryPolicy()) or 'error', got ${describe(policy)}`,
    );
  }
  return policy;
}

/**
 * The failure policy of a dispatcher: the one it was given, else its receiver's default (see
 * `ReceiverSession.defaultFailurePolicy`); undefined when a failure errors the output.
 */
export function chosenPolicy<T, K>(
  given: FailurePolicy<T, K> | 'error' | undefined,
  receiverDefault: FailurePolicy<T, unknown> | undefined,
): FailurePolicy<T, K> | undefined {
  if (given === 'error') return undefined;
  if (given !== undefined) return given;
  // Anything but a policy (a session of the user's with a wrong value) leaves RxJS semantics.
  return isFailurePolicy(receiverDefault) ? (receiverDefault as FailurePolicy<T, K>) : undefined;
}

/** The lanes of the handler's kind: the given executor's, which must be of that kind, or the shared executor's. */
function lanesFor(
  owner: string,
  executor: unknown,
  threadHandler: ThreadHandler<unknown, unknown> | undefined,
): LaneBackend {
  const given =
    executor !== undefined
      ? executor
      : threadHandler === undefined
        ? KeyedExecutor.shared
        : sharedExecutorOf(threadHandler);
  const lanes = lanesOfOption(owner, given);
  if (threadHandler === undefined && lanes.name === 'ThreadExecutor') {
    throw new TypeError(
      `${owner}: \`executor\` is a ThreadExecutor, so \`handle\` must be threadHandler(module, exportName), got a function`,
    );
  }
  if (threadHandler !== undefined && lanes.name === 'KeyedExecutor') {
    throw new TypeError(
      `${owner}: \`handle\` is a thread handler (${threadHandler.moduleUrl}#${threadHandler.exportName}), so \`executor\` must be a ThreadExecutor, got a KeyedExecutor (event-loop lanes)`,
    );
  }
  return lanes;
}

/** The `handle` of a dispatch on thread lanes: the handler runs in the threads, never here. */
function runsInThreads(): never {
  throw new Error('keyedDispatch: a thread handler runs only in the threads of a ThreadExecutor');
}
