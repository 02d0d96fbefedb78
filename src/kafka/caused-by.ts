/** What the clients' errors carry that tells an outage's error from others. */
export interface ClientError {
  name?: unknown;
  cause?: unknown;
  /** kafkajs: the request may succeed if tried again. */
  retriable?: unknown;
  /** @platformatic/kafka: the request may succeed if tried again. */
  canRetry?: unknown;
  /** @platformatic/kafka's `MultipleErrors` (an `AggregateError`): the failure of each try. */
  errors?: unknown;
}

/**
 * Whether `error`, an error it was caused by (`cause`) or one it gathers (`errors`, at any depth)
 * passes `test`. The clients wrap a connection's failure in their own errors (retries spent, several
 * tries failed), so what failed underneath is found this way.
 */
export function causedBy(error: unknown, test: (e: ClientError) => boolean): boolean {
  const seen = new Set<unknown>();
  const pending = [error];
  while (pending.length > 0) {
    const e = pending.pop() as ClientError | null | undefined;
    if (typeof e !== 'object' || e === null || seen.has(e)) continue;
    seen.add(e);
    if (test(e)) return true;
    pending.push(e.cause);
    if (Array.isArray(e.errors)) pending.push(...e.errors);
  }
  return false;
}
