import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ObservableInput, ObservedValueOf } from 'rxjs';
import { describe, functionOption } from '../validate';
import type { TransferItem } from './protocol';
import { attachSharedExecutor } from './thread-access';
import { ThreadExecutor } from './thread-executor';

/** Options of `threadHandler`. */
export interface ThreadHandlerOptions<T> {
  /**
   * Lists the buffers and ports of a message that should move to the thread instead of being copied
   * (they become unusable on the main thread). Runs on the main thread once per message. Default: none.
   */
  transfer?: (message: T) => readonly TransferItem[];
}

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

/**
 * Names a handler module for thread lanes: `threadHandler(new URL('./price.js', import.meta.url), 'price')`
 * or an absolute path. The module must be loadable by plain Node in a worker thread: JavaScript, or on
 * Node 22.18 and later a TypeScript file Node runs as it is (erasable syntax only: `import type`, no
 * enums or parameter properties).
 *
 * Typed from the export itself, the message and value types follow the module, and an export that does
 * not return an `ObservableInput` fails to compile:
 * `threadHandler<typeof import('./pricing').price>(new URL('./pricing.ts', import.meta.url), 'price')`.
 * With `<T, R>` instead, `R` is taken on trust (the module is not checked against it).
 */
export function threadHandler<T, R>(
  module: URL | string,
  exportName?: string,
  options?: ThreadHandlerOptions<T>,
): ThreadHandler<T, R>;
export function threadHandler<F extends ThreadHandlerFunction>(
  module: URL | string,
  exportName?: string,
  options?: ThreadHandlerOptions<Parameters<F>[0]>,
): ThreadHandler<Parameters<F>[0], ObservedValueOf<ReturnType<F>>>;
export function threadHandler<T, R>(
  module: URL | string,
  exportName = 'default',
  options: ThreadHandlerOptions<T> = {},
): ThreadHandler<T, R> {
  let moduleUrl: string;
  if (module instanceof URL) moduleUrl = module.href;
  else if (typeof module === 'string' && isAbsolute(module)) moduleUrl = pathToFileURL(module).href;
  else if (typeof module === 'string' && /^[a-z][a-z0-9+.-]*:/i.test(module)) moduleUrl = module;
  else {
    throw new TypeError(
      `threadHandler: expected \`module\` to be a URL or an absolute path, got ${describe(module)}; ` +
        "a thread resolves nothing relative to the caller, use new URL('./handler.js', import.meta.url) or path.join(__dirname, ...)",
    );
  }
  if (typeof exportName !== 'string' || exportName === '') {
    throw new TypeError(
      `threadHandler: expected \`exportName\` to be a non-empty string, got ${describe(exportName)}`,
    );
  }
  const transfer =
    options.transfer === undefined
      ? undefined
      : functionOption('threadHandler', 'transfer', options.transfer);
  const handler: ThreadHandler<T, R> = { kind: 'thread-handler', moduleUrl, exportName, transfer };
  // The handler brings the thread stack along, so a dispatch without thread lanes never loads it.
  attachSharedExecutor(handler, () => ThreadExecutor.shared);
  return handler;
}
