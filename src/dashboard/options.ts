import type { HealthOptions } from '../health/health-check';
import { describe, integerOption, optionsObject } from '../validate';
import type { DashboardSources } from './sources';

/** Options of `serveDashboard`. */
export interface DashboardOptions {
  /** What it shows: a `DispatchMetrics`, a `DispatchRuntime` (its components with one), or an object naming several. */
  sources: DashboardSources;
  /** TCP port. Integer from 0 to 65535; 0 (the default) takes a free one (see `url`). */
  port?: number;
  /**
   * Address to bind. Default `'127.0.0.1'`: only this machine can connect. Which Host headers are
   * answered follows from the address bound (see `allowedHosts`).
   */
  host?: string;
  /**
   * Host names, besides IP literals and `localhost`, that requests may be addressed to (the Host header,
   * any port): the names a reverse proxy or the users reach the dashboard by. Any other name is answered
   * 421, so that a web page cannot point its own name at the dashboard (DNS rebinding) and read it. Bound
   * to a loopback address, only loopback IP literals pass besides these names. Exact names (no
   * wildcards, no port), compared without case. Default none.
   */
  allowedHosts?: readonly string[];
  /**
   * When set, every request needs it: `Authorization: Bearer <token>`, or `?token=<token>` in the URL (a
   * browser; `url` carries it). Non-empty string. Default: none.
   */
  token?: string;
  /** How often the page is updated, in ms. Integer from 100 to 60,000. Default 1,000. */
  periodMs?: number;
  /**
   * The most live pages (`GET /events` streams) at once; one more is answered 503 until one leaves.
   * Each costs a frame per dispatcher per period and up to 1 MiB of unsent data. Integer from 1 to
   * 10,000. Default 16.
   */
  maxEventStreams?: number;
  /** The bounds of `/livez` and `/readyz` (see `HealthCheck`). Default: `HealthCheck`'s defaults. */
  health?: HealthOptions;
}

/** The options, checked, with their defaults. */
export type ResolvedDashboardOptions = Required<Omit<DashboardOptions, 'token' | 'health'>> & {
  token?: string;
  health?: HealthOptions;
};

const NAMES = [
  'sources',
  'port',
  'host',
  'allowedHosts',
  'token',
  'periodMs',
  'maxEventStreams',
  'health',
] satisfies Array<keyof DashboardOptions>;

/** A host name as `allowedHosts` takes it: dot-separated labels of letters, digits, `-` and `_`. */
const HOST_NAME = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/i;

/** Checks `serveDashboard`'s options, naming the option, the value and its type when one is wrong. */
export function dashboardOptions(options: DashboardOptions): ResolvedDashboardOptions {
  optionsObject('serveDashboard', options, NAMES);
  const host = options.host ?? '127.0.0.1';
  if (typeof host !== 'string' || host === '') {
    throw new TypeError(`serveDashboard: expected \`host\` to be a non-empty string, got ${describe(host)}`);
  }
  const token = options.token;
  if (token !== undefined && (typeof token !== 'string' || token === '')) {
    throw new TypeError(
      `serveDashboard: expected \`token\` to be a non-empty string, got ${describe(token)}`,
    );
  }
  return {
    sources: options.sources,
    health: options.health,
    port: integerOption('serveDashboard', 'port', options.port, 0, 0, 65_535),
    host,
    allowedHosts: allowedHosts(options.allowedHosts),
    token,
    periodMs: integerOption('serveDashboard', 'periodMs', options.periodMs, 1000, 100, 60_000),
    maxEventStreams: integerOption(
      'serveDashboard',
      'maxEventStreams',
      options.maxEventStreams,
      16,
      1,
      10_000,
    ),
  };
}

function allowedHosts(value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    throw new TypeError(
      `serveDashboard: expected \`allowedHosts\` to be an array of host names, got ${describe(value)}`,
    );
  }
  value.forEach((name: unknown, i) => {
    if (typeof name !== 'string' || !HOST_NAME.test(name)) {
      throw new TypeError(
        `serveDashboard: expected \`allowedHosts[${i}]\` to be a host name (letters, digits, '-', '_' ` +
          `and '.', no port), got ${describe(name)}`,
      );
    }
  });
  return [...value];
}
