import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ObservedValueOf } from 'rxjs';
import { describe, functionOption } from '../validate';
import type { TransferItem } from './protocol';
import { ThreadExecutor } from './thread-executor';
import { attachSharedExecutor, type ThreadHandler, type ThreadHandlerFunction } from './thread-handler';

/** How an absolute URL starts: its scheme (`file:`, `data:`, …). */
const URL_SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/** Options of `threadHandler`. */
export interface ThreadHandlerOptions<T> {
  /**
   * Lists the buffers and ports of a message that should move to the thread instead of being copied
   * (they become unusable on the main thread). Runs on the main thread once per message, synchronously:
   * one that throws or returns anything but an array (an async function's Promise) fails its message.
   * Default: none.
   */
  transfer?: (message: T) => readonly TransferItem[];
}

/**
 * Names a handler module for thread lanes: `threadHandler(new URL('./price.js', import.meta.url), 'price')`
 * or an absolute path (`module` is typed by shape, any object with a URL's `href`, so that these types need
 * neither the DOM's nor Node's `URL`). The module must be loadable by plain Node in a worker thread:
 * JavaScript, or on Node 22.18 and later a TypeScript file Node runs as it is (erasable syntax only:
 * `import type`, no enums or parameter properties).
 *
 * Typed from the export itself, the message and value types follow the module, and an export that does
 * not return an `ObservableInput` fails to compile:
 * `threadHandler<typeof import('./pricing').price>(new URL('./pricing.ts', import.meta.url), 'price')`.
 * With `<T, R>` instead, `R` is taken on trust (the module is not checked against it).
 */
export function threadHandler<T, R>(
  module: { readonly href: string } | string,
  exportName?: string,
  options?: ThreadHandlerOptions<T>,
): ThreadHandler<T, R>;
export function threadHandler<F extends ThreadHandlerFunction>(
  module: { readonly href: string } | string,
  exportName?: string,
  options?: ThreadHandlerOptions<Parameters<F>[0]>,
): ThreadHandler<Parameters<F>[0], ObservedValueOf<ReturnType<F>>>;
export function threadHandler<T, R>(
  module: { readonly href: string } | string,
  exportName = 'default',
  options: ThreadHandlerOptions<T> = {},
): ThreadHandler<T, R> {
  // Any object with an `href` stands for a URL (the parameter is typed by shape); its href must be absolute.
  const href = typeof module === 'object' && module !== null ? module.href : module;
  let moduleUrl: string;
  if (typeof module === 'string' && isAbsolute(module)) moduleUrl = pathToFileURL(module).href;
  else if (typeof href === 'string' && URL_SCHEME.test(href)) moduleUrl = href;
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
