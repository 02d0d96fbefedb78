import type { DispatchMetrics } from '../metrics';
import { isDispatchMetrics } from '../metrics/is-metrics';
import type { DispatchRuntime } from '../runtime';
import { isDispatchRuntime as isRuntime } from '../runtime/is-runtime';
import { describe } from '../validate';

/** A dispatcher's metrics, or a runtime whose components with a `DispatchMetrics` each show by name. */
export type DashboardSource = DispatchMetrics | DispatchRuntime;

/** One source, or several by name (`{ orders: metrics, billing: runtime }`). */
export type DashboardSources = DashboardSource | Readonly<Record<string, DashboardSource>>;

/** A dispatcher as the dashboard shows it. */
export interface NamedMetrics {
  readonly name: string;
  readonly metrics: DispatchMetrics;
}

/**
 * The dispatchers `sources` names, in order. A lone `DispatchMetrics` is named `dispatcher`; a runtime's
 * components keep their names (prefixed `<name>/` inside a named set). Runtime components without a
 * `DispatchMetrics` as `dispatch.stats` are left out: there is nothing of theirs to show.
 */
export function namedMetrics(sources: unknown): NamedMetrics[] {
  const named: NamedMetrics[] = [];
  if (isDispatchMetrics(sources)) named.push({ name: 'dispatcher', metrics: sources });
  else if (isRuntime(sources)) named.push(...ofRuntime(sources, ''));
  else if (sources !== null && typeof sources === 'object' && !Array.isArray(sources)) {
    for (const [name, source] of Object.entries(sources)) {
      if (isDispatchMetrics(source)) named.push({ name, metrics: source });
      else if (isRuntime(source)) named.push(...ofRuntime(source, `${name}/`));
      else {
        throw new TypeError(
          `serveDashboard: expected \`sources.${name}\` to be a DispatchMetrics or a DispatchRuntime, got ${describe(source)}`,
        );
      }
    }
  } else {
    throw new TypeError(
      'serveDashboard: expected `sources` to be a DispatchMetrics, a DispatchRuntime or an object naming ' +
        `them, got ${describe(sources)}`,
    );
  }
  if (named.length === 0) {
    throw new TypeError(
      'serveDashboard: expected `sources` to name at least one DispatchMetrics (a DispatchRuntime shows ' +
        'the components given one as `dispatch.stats`), got none',
    );
  }
  const seen = new Set<string>();
  for (const { name } of named) {
    if (seen.has(name))
      throw new TypeError(
        `serveDashboard: expected unique dispatcher names in \`sources\`, got '${name}' twice`,
      );
    seen.add(name);
  }
  return named;
}

function ofRuntime(runtime: DispatchRuntime, prefix: string): NamedMetrics[] {
  const named: NamedMetrics[] = [];
  for (const { name, stats } of runtime.componentStats()) {
    if (isDispatchMetrics(stats)) named.push({ name: `${prefix}${name}`, metrics: stats });
  }
  return named;
}
