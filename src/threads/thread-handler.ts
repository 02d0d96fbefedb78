import type { ObservableInput } from 'rxjs';
import { sharedSlot } from '../internal/shared-slot';
import type { TransferItem } from './protocol';

/**
 * A handler that runs on thread lanes: the export `exportName` of the module at `moduleUrl`, loaded by
 * every thread that gets a message for it. The function is called as `(message, context)` with a
 * structured clone of the message and returns any `ObservableInput`; its values are cloned back and
 * emitted by `keyedDispatch`. `R` is the type of those values (the module is not type-checked against it).
 */
export interface ThreadHandler<T, R> {
  /** Tells a thread handler from a plain handler function. */
  readonly kind: 'thread-handler';
  /** `file:` URL (or any URL `import()` accepts) of the handler module. */
  readonly moduleUrl: string;
  /** The name of the module's export that handles messages. */
  readonly exportName: string;
  /** The `transfer` option: what of a message moves to the thread instead of being copied. */
  readonly transfer: ((message: T) => readonly TransferItem[]) | undefined;
  /** Phantom fields that carry the message and value types; never set. */
  readonly __types?: {
    /** The type of the messages handled. */
    message: T;
    /** The type of the values the handler emits. */
    value: R;
  };
}

/**
 * What a thread handler module exports for `threadHandler`: a function of a message (a structured clone)
 * and its context, returning any `ObservableInput`.
 */
export type ThreadHandlerFunction = (message: never, context: never) => ObservableInput<unknown>;

/** True for a `threadHandler(...)`: told by its `kind`, so telling needs none of the thread stack. */
export function isThreadHandler(value: unknown): value is ThreadHandler<unknown, unknown> {
  return (value as Partial<ThreadHandler<unknown, unknown>> | null)?.kind === 'thread-handler';
}

/**
 * The way from a thread handler to `ThreadExecutor.shared`, used when a dispatch names no executor:
 * the handler brings the thread stack along, so a dispatch without thread lanes never loads it. A
 * shared slot, so a handler of another copy of the library (its CommonJS build beside the ESM one)
 * brings its own.
 */
const sharedExecutors = sharedSlot<() => object>('threadHandler.sharedExecutor');

export function attachSharedExecutor(handler: object, shared: () => object): void {
  sharedExecutors.attach(handler, shared);
}

/** The shared executor of `handler`'s thread stack. */
export function sharedExecutorOf(handler: ThreadHandler<unknown, unknown>): object {
  return (sharedExecutors.of(handler) as () => object)();
}
