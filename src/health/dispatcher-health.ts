import { errorTextOf } from '../internal/text-of';
import type { HealthFacts } from './facts';
import type { HealthReason } from './health-reason';
import type { StallWatch } from './stall-watch';

/** The bounds a health check holds a dispatcher to. */
export interface HealthBounds {
  readonly stallMs: number;
  readonly unreachableMs: number;
}

/**
 * What is wrong with one dispatcher, from its facts (null: it never started): the one place that
 * decides live and ready.
 */
export function dispatcherReasons(
  source: string,
  facts: HealthFacts | null,
  watch: StallWatch,
  bounds: HealthBounds,
  now: number,
): HealthReason[] {
  if (facts === null)
    return [{ source, fails: 'ready', problem: 'not-started', detail: 'it has not started' }];
  const ending = facts.end.ending;
  if (ending !== null) {
    if (typeof ending === 'object') {
      const detail = `its output errored: ${errorTextOf(ending.error)}`;
      return [{ source, fails: 'live', problem: 'errored', detail }];
    }
    const detail = ending === 'completed' ? 'its source completed' : 'it was unsubscribed (stopped)';
    return [{ source, fails: 'ready', problem: 'ended', detail }];
  }
  const reasons: HealthReason[] = [];
  const stalest = watch.stalest(facts.unfinished(), now, (message) => facts.lastFailureOf(message));
  if (stalest !== null && stalest.forMs > bounds.stallMs) {
    const from = facts.sourceOf(stalest.message);
    reasons.push({
      source,
      fails: 'live',
      problem: 'stalled',
      detail:
        `a message${from === undefined ? '' : ` (${from})`} has been unfinished for ${stalest.forMs} ms ` +
        `without a failed attempt, more than stallMs (${bounds.stallMs} ms)`,
    });
  }
  const fault = facts.unansweredFault;
  if (fault !== null && now - fault.failingSince > bounds.unreachableMs) {
    reasons.push({
      source,
      fails: 'ready',
      problem: 'unreachable',
      detail:
        `${fault.receiver}: the transport has been failing for ${now - fault.failingSince} ms, more than ` +
        `unreachableMs (${bounds.unreachableMs} ms); last failure (${fault.operation}): ${errorTextOf(fault.error)}`,
    });
  }
  const notReady = notReadyBecause(facts);
  if (notReady !== undefined) {
    reasons.push({ source, fails: 'ready', problem: 'receiver-not-ready', detail: notReady });
  }
  return reasons;
}

/** Why the receiver takes no work; one that throws when asked is not ready either. */
function notReadyBecause(facts: HealthFacts): string | undefined {
  try {
    return facts.notReadyBecause();
  } catch (err) {
    return `its receiver's notReadyBecause threw: ${errorTextOf(err)}`;
  }
}
