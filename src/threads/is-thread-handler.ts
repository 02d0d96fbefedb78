import type { ThreadHandler } from './handler';

/** True for a `threadHandler(...)`: told by its `kind`, so telling needs none of the thread stack. */
export function isThreadHandler(value: unknown): value is ThreadHandler<unknown, unknown> {
  return (value as Partial<ThreadHandler<unknown, unknown>> | null)?.kind === 'thread-handler';
}
