import type { DispatchRuntime } from '../runtime/dispatch-runtime';
import { isDispatchRuntime } from '../runtime/is-runtime';
import { type DispatchStats, isDispatchStats, statsLink } from '../stats';
import { describe, durationOption, optionsObject } from '../validate';
import { dispatcherReasons, type HealthBounds } from './dispatcher-health';
import { type HealthReason, type HealthStatus, statusOf } from './health-reason';
import { StallWatch } from './stall-watch';

/** What a `HealthCheck` reads: a dispatcher's stats, a runtime, or an object naming several. */
export type HealthSource = DispatchStats | DispatchRuntime;

/** One source, or several by name (`{ orders: stats, billing: runtime }`). */
export type HealthSources = HealthSource | Readonly<Record<string, HealthSource>>;

/** Options of `HealthCheck`. */
export interface HealthOptions {
  /**
   * A message unfinished for longer than this (ms) with no failed attempt in between makes its
   * dispatcher not live: a handler that hangs. A message waiting in its key's mailbox counts too, so
   * set it above the longest a message may legitimately wait and run: a handler's longest run times
   * the messages its key may hold (`maxPerKey`). A retry is progress: a message its failure policy
   * keeps retrying is never a stall. Measured from the first check that saw the message, so a check
   * must run more often than this (a Kubernetes probe does). Integer ms ≥ 1. Default 300,000.
   */
  stallMs?: number;
  /**
   * A transport failing for longer than this (ms), with no success in between, makes its dispatcher
   * not ready. Keep it below the receiver's `maxUnreachableMs`, past which the output errors (not
   * live). Integer ms ≥ 0. Default 10,000.
   */
  unreachableMs?: number;
}

/** A dispatcher's health, by the name the check's sources give it. */
export interface DispatcherHealth extends HealthStatus {
  /** The dispatcher's name: its key in the sources, its runtime component's name, or `dispatcher`. */
  readonly name: string;
}

/** Everything a check found: the overall status (every reason) and each dispatcher's. */
export interface HealthReport extends HealthStatus {
  /** Each dispatcher's own status, in the order of the sources. */
  readonly dispatchers: readonly DispatcherHealth[];
}

/** A dispatcher as the check reads it. */
interface Watched {
  readonly name: string;
  readonly stats: DispatchStats;
  readonly watch: StallWatch;
}

/** A runtime as the check reads it: its own state, and its components with `stats`. */
interface WatchedRuntime {
  readonly name: string;
  readonly runtime: DispatchRuntime;
}

/**
 * Says whether dispatchers and runtimes are live (the process should not be restarted) and ready (it
 * should get traffic), with the reasons: for a Kubernetes probe or any HTTP framework's health route
 * (`serveDashboard` answers `/livez` and `/readyz` with one). A check reads what the dispatchers keep
 * anyway; it costs them nothing between checks, and a check costs a walk over their unfinished messages.
 * See `HealthProblem` for what fails which. Keep one instance: stalls are measured across its checks.
 */
export class HealthCheck {
  readonly #bounds: HealthBounds;
  readonly #dispatchers: Watched[] = [];
  readonly #runtimes: WatchedRuntime[] = [];

  constructor(sources: HealthSources, options: HealthOptions = {}) {
    optionsObject('HealthCheck', options, ['stallMs', 'unreachableMs'] satisfies Array<keyof HealthOptions>);
    this.#bounds = {
      stallMs: durationOption('HealthCheck', 'stallMs', options.stallMs, 300_000, 1),
      unreachableMs: durationOption('HealthCheck', 'unreachableMs', options.unreachableMs, 10_000, 0),
    };
    if (isDispatchStats(sources) || isDispatchRuntime(sources)) this.#add('', sources);
    else if (sources !== null && typeof sources === 'object' && !Array.isArray(sources)) {
      for (const [name, source] of Object.entries(sources)) {
        if (!isDispatchStats(source) && !isDispatchRuntime(source)) {
          throw new TypeError(
            `HealthCheck: expected \`sources.${name}\` to be a DispatchStats or a DispatchRuntime, got ${describe(source)}`,
          );
        }
        this.#add(name, source);
      }
    } else {
      throw new TypeError(
        'HealthCheck: expected `sources` to be a DispatchStats, a DispatchRuntime or an object naming ' +
          `them, got ${describe(sources)}`,
      );
    }
  }

  #add(name: string, source: HealthSource): void {
    if (isDispatchStats(source)) {
      this.#dispatchers.push({ name: name || 'dispatcher', stats: source, watch: new StallWatch() });
      return;
    }
    this.#runtimes.push({ name: name || 'runtime', runtime: source });
    for (const component of source.componentStats()) {
      if (component.stats === undefined) continue;
      const named = name === '' ? component.name : `${name}/${component.name}`;
      this.#dispatchers.push({ name: named, stats: component.stats, watch: new StallWatch() });
    }
  }

  /** Live and ready now, overall and per dispatcher, with the reasons. */
  check(): HealthReport {
    const now = Date.now();
    const reasons: HealthReason[] = [];
    for (const { name, runtime } of this.#runtimes) {
      const state = runtime.state;
      if (state === 'new')
        reasons.push({ source: name, fails: 'ready', problem: 'not-started', detail: 'it has not started' });
      else if (state !== 'running')
        reasons.push({ source: name, fails: 'ready', problem: state, detail: `it is ${state}` });
    }
    const dispatchers = this.#dispatchers.map(({ name, stats, watch }) => {
      const found = dispatcherReasons(name, statsLink(stats).facts(), watch, this.#bounds, now);
      reasons.push(...found);
      return { name, ...statusOf(found) };
    });
    return { ...statusOf(reasons), dispatchers };
  }
}
