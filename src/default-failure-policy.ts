import { type FailurePolicy, type FailureReport, retryPolicy } from './failure-policy';
import { textOf } from './internal/text-of';

/**
 * The options of the failure policy the transport receivers (Kafka, Redis Streams, NATS JetStream) and
 * `LocalBus` give a dispatcher that has none: a failed message is retried in its key's mailbox until it
 * succeeds, 100 ms doubling up to 30 s between attempts (jitter 0.5), its key waiting while every other
 * key flows; each failure is logged with `console.error`. Nothing is acknowledged meanwhile. A message
 * whose key selector failed cannot succeed on retry: it is logged and settled `failed` at once, which
 * its receiver's `onFailed` (by default `'redeliver'`) leaves unacknowledged.
 */
export const DEFAULT_RETRY = {
  maxAttempts: Number.POSITIVE_INFINITY,
  backoff: { initialMs: 100, factor: 2, maxMs: 30_000, jitter: 0.5 },
} as const;

let policy: FailurePolicy<unknown, unknown> | undefined;

/** The default failure policy of the transport receivers (see `DEFAULT_RETRY`); made once, on first use. */
export function defaultFailurePolicy<T>(): FailurePolicy<T, unknown> {
  policy ??= retryPolicy<unknown, unknown>({ ...DEFAULT_RETRY, onFailure: logFailure });
  return policy as FailurePolicy<T, unknown>;
}

/** The default `onFailure`: one line per failed attempt, so that no failure goes unseen. */
export function logFailure(report: FailureReport<unknown, unknown>): void {
  const what =
    report.key === undefined
      ? 'a message whose key selector failed'
      : `the message of key ${textOf(report.key)}`;
  const from = report.source === undefined ? '' : ` of ${report.source}`;
  const next =
    report.retryInMs === undefined
      ? 'a key selector gives the same answer every time, so it is settled failed, not retried (by default left unacknowledged)'
      : `retrying in ${Math.round(report.retryInMs)} ms`;
  console.error(`keyedDispatch: attempt ${report.attempt} at ${what}${from} failed; ${next}.`, report.error);
}
