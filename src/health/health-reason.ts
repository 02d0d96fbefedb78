/**
 * What a health check found wrong. Not live (the process should be restarted): `errored` (a dispatcher's
 * output errored: it handles nothing more), `stalled` (a message has gone without progress for longer
 * than `stallMs`). Not ready (it should get no traffic, a restart would not help): `not-started`,
 * `ended` (a dispatcher's source completed or it was unsubscribed), `unreachable` (its transport has
 * been failing for longer than `unreachableMs`), `receiver-not-ready` (its receiver says why: a Kafka
 * consumer that has not joined its group yet, a receiver closing), `stopping` and `stopped` (a runtime).
 */
export type HealthProblem =
  | 'errored'
  | 'stalled'
  | 'not-started'
  | 'ended'
  | 'unreachable'
  | 'receiver-not-ready'
  | 'stopping'
  | 'stopped';

/** One thing a health check found wrong, and where. */
export interface HealthReason {
  /** The dispatcher or runtime it concerns, by the name the check's sources give it. */
  readonly source: string;
  /** What it fails: `live` (restart the process; it fails `ready` too) or only `ready`. */
  readonly fails: 'live' | 'ready';
  /** What is wrong (see `HealthProblem`). */
  readonly problem: HealthProblem;
  /** What was found, in words: the error, the message and for how long, the transport's last failure. */
  readonly detail: string;
}

/** Live and ready, with the reasons when not. */
export interface HealthStatus {
  /** False when some reason fails `live`: the process should be restarted. */
  readonly live: boolean;
  /** False when any reason is given: the process should get no traffic now. */
  readonly ready: boolean;
  /** Why not, in the order found; empty when live and ready. */
  readonly reasons: readonly HealthReason[];
}

/** The status that `reasons` make. */
export function statusOf(reasons: readonly HealthReason[]): HealthStatus {
  return { live: !reasons.some((r) => r.fails === 'live'), ready: reasons.length === 0, reasons };
}
