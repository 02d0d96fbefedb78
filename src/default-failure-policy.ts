import { type FailurePolicy, type FailureReport, retryPolicy } from './failure-policy';
import { textOf } from './internal/text-of';

/**
 * The options of the failure policy the transport receivers (Kafka, Redis Streams, NATS JetStream) and
 * `LocalBus` give a dispatcher that has none: a failed message is retried in its key's mailbox until it
 * succeeds, 100 ms doubling up to 30 s between attempts (jitter 0.5), its key waiting while every other
 * key flows; each failure is logged with `console.error`. Nothing is acknowledged meanwhile. A failure a
 * retry cannot cure is settled `failed` at once, for its receiver's `onFailed` to decide (Kafka, Redis
 * Streams and NATS JetStream leave it unacknowledged by default; `LocalBus` drops it): a key selector
 * that failed (it gives the same answer every time), a message blamed for crashing its thread
 * (`ThreadCrashLoopError`; each retry would take a thread down again), one past `maxBlockingMs`
 * (`ThreadBlockedError`), one whose data went down with its thread (`ThreadExitedError`) and one that
 * cannot be posted to a thread (`DataCloneError`).
 */
export const DEFAULT_RETRY = {
  maxAttempts: Number.POSITIVE_INFINITY,
  backoff: { initialMs: 100, factor: 2, maxMs: 30_000, jitter: 0.5 },
} as const;

let policy: FailurePolicy<unknown, unknown> | undefined;

/** The default failure policy of the transport receivers (see `DEFAULT_RETRY`); made once, on first use. */
export function defaultFailurePolicy<T>(): FailurePolicy<T, unknown> {
  policy ??= retryPolicy<unknown, unknown>({ ...DEFAULT_RETRY, retryable: isCurable, onFailure: logFailure });
  return policy as FailurePolicy<T, unknown>;
}

/** Failures a retry cannot cure, by name: errors of another copy of the library, and the platform's own. */
const INCURABLE = new Set([
  'ThreadCrashLoopError',
  'ThreadBlockedError',
  'ThreadExitedError',
  'DataCloneError',
]);

/** Whether another attempt could succeed: every failure but those a retry cannot cure. */
function isCurable(error: unknown): boolean {
  return !(error instanceof Error && INCURABLE.has(error.name));
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
      ? 'a retry cannot cure it, so it is settled failed and its receiver decides (by default a broker redelivers it later; LocalBus drops it)'
      : `retrying in ${Math.round(report.retryInMs)} ms`;
  console.error(`keyedDispatch: attempt ${report.attempt} at ${what}${from} failed; ${next}.`, report.error);
}
