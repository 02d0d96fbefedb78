import type { ObservableInput } from 'rxjs';
import type { HandlerContext } from './engine/mailbox';
import type { KeyedExecutor } from './executor';
import type { FailurePolicy } from './failure-policy';
import type { DispatchStats } from './stats';
import { isThreadHandler, type ThreadHandler } from './threads/handler';
import type { ThreadExecutor } from './threads/thread-executor';

/** Options of `keyedDispatch`. Invalid values throw a `TypeError` naming the option when the operator is created. */
export interface KeyedDispatchOptions<T, K, R> {
  /**
   * Selects a message's key (aggregate ID, account, device). Messages of one key run one at a time in
   * receive order. Must return a value other than `undefined` or `null`; keys compare like `Map` keys.
   */
  key: (message: T) => K;
  /**
   * Handles one message. Returns any `ObservableInput` (Observable, Promise, array, iterable); its values
   * are emitted by the operator, and the key's next message starts only after it completes. A throw or
   * error errors the operator's output (after tearing everything down), unless `onFailure` handles it.
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
   * What to do when a handler fails, instead of erroring the output: `retryPolicy({ ... })` retries
   * inside the key's mailbox with backoff, then dead-letters the message, settles it as failed and goes
   * on. Default: none (a handler error errors the output).
   */
  onFailure?: FailurePolicy<T, K>;
}

export interface ResolvedDispatchOptions<T, K, R> {
  key: (message: T) => K;
  handle: (message: T, context: HandlerContext<K>) => ObservableInput<R>;
  /** Set when `handle` is a thread handler (then `handle` is never called on this thread). */
  threadHandler: ThreadHandler<unknown, unknown> | undefined;
  executor: KeyedExecutor | ThreadExecutor | undefined;
  maxInFlight: number;
  batch: number;
  throughput: number;
  onOverflow: 'buffer' | 'error';
  stats: DispatchStats | undefined;
}

export function resolveDispatchOptions<T, K, R>(
  options: KeyedDispatchOptions<T, K, R>,
): ResolvedDispatchOptions<T, K, R> {
  optionsObject('keyedDispatch', options);
  const maxInFlight = integerOption('keyedDispatch', 'maxInFlight', options.maxInFlight, 256, 1);
  const onOverflow = options.onOverflow ?? 'buffer';
  if (onOverflow !== 'buffer' && onOverflow !== 'error') {
    throw new TypeError(
      `keyedDispatch: expected \`onOverflow\` to be 'buffer' or 'error', got ${describe(onOverflow)}`,
    );
  }
  const threadHandler = isThreadHandler(options.handle) ? options.handle : undefined;
  const onFailure = options.onFailure;
  if (
    onFailure !== undefined &&
    typeof (onFailure as Partial<FailurePolicy<T, K>> | null)?.wrap !== 'function'
  ) {
    throw new TypeError(
      `keyedDispatch: expected \`onFailure\` to be a failure policy (from retryPolicy()), got ${describe(onFailure)}`,
    );
  }
  if (onFailure !== undefined && threadHandler) {
    throw new TypeError('keyedDispatch: `onFailure` is not supported with a thread handler yet; got both');
  }
  const handle = threadHandler
    ? runsInThreads
    : functionOption(
        'keyedDispatch',
        'handle',
        options.handle as (message: T, context: HandlerContext<K>) => ObservableInput<R>,
      );
  return {
    key: functionOption('keyedDispatch', 'key', options.key),
    handle: onFailure === undefined || threadHandler ? handle : onFailure.wrap(handle),
    threadHandler,
    executor: options.executor,
    maxInFlight,
    batch: Math.max(1, Math.floor(maxInFlight / 16)),
    throughput: integerOption('keyedDispatch', 'throughput', options.throughput, 16, 1),
    onOverflow,
    stats: options.stats,
  };
}

/** The `handle` of a dispatch on thread lanes: the handler runs in the threads, never here. */
function runsInThreads(): never {
  throw new Error('keyedDispatch: a thread handler runs only in the threads of a ThreadExecutor');
}

/** Throws unless `options` is an object, naming its owner: every options bag is checked this way first. */
export function optionsObject(owner: string, options: unknown): void {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${owner}: expected an options object, got ${describe(options)}`);
  }
}

/** Validates an optional integer option with a lower bound, naming the option, the value and its type. */
export function integerOption(
  owner: string,
  name: string,
  value: unknown,
  fallback: number,
  min: number,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new TypeError(`${owner}: expected \`${name}\` to be an integer >= ${min}, got ${describe(value)}`);
  }
  return value;
}

export function functionOption<F>(owner: string, name: string, value: F): F {
  if (typeof value !== 'function') {
    throw new TypeError(`${owner}: expected \`${name}\` to be a function, got ${describe(value)}`);
  }
  return value;
}

/** `1.5 (number)`, `'x' (string)`, `null`: a value and its type, for error messages. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') return `'${value}' (string)`;
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object') return `${Array.isArray(value) ? 'an array' : 'an object'} (object)`;
  return `${String(value)} (${typeof value})`;
}
