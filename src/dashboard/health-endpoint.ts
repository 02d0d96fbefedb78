import type { HealthCheck } from '../health/health-check';

/** The answer to a probe: its HTTP status and JSON body. */
export interface ProbeAnswer {
  readonly status: 200 | 503;
  readonly body: string;
}

/**
 * `/livez` (`'live'`) or `/readyz` (`'ready'`): 200 when the check passes, else 503; the body names the
 * reasons that fail it (for `/readyz` every reason, as a process that is not live is not ready either).
 */
export function probeAnswer(check: HealthCheck, probe: 'live' | 'ready'): ProbeAnswer {
  const report = check.check();
  const passed = report[probe];
  const reasons = probe === 'live' ? report.reasons.filter((r) => r.fails === 'live') : report.reasons;
  return {
    status: passed ? 200 : 503,
    body: `${JSON.stringify({ [probe]: passed, reasons })}\n`,
  };
}
