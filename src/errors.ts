/**
 * Raised into dispatchers still running when their executor is closed, and by a dispatcher started on
 * a closed executor. The message names the kind of executor (`KeyedExecutor` or `ThreadExecutor`).
 */
export class ExecutorClosedError extends Error {
  /** The error's name, for logs and `instanceof`-free checks. */
  override name = 'ExecutorClosedError';
  constructor(executor: 'KeyedExecutor' | 'ThreadExecutor' = 'KeyedExecutor') {
    super(`${executor} was closed while a dispatcher was still running on it`);
  }
}
