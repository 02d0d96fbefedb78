import { DurationHistogram } from '../prometheus/duration-histogram';
import { prometheusFamilies } from '../prometheus/families';
import { DEFAULT_PREFIX } from '../prometheus/instruments';
import { formatFamilies } from '../prometheus/text-format';
import type { NamedMetrics } from './sources';

/**
 * `GET /metrics`: every dispatcher in the Prometheus text format, labelled `dispatcher="<name>"`, with
 * the names of `keyed-dispatch/prometheus` (lanes once per executor, no per-key labels). Gauges and counters are read on request; handler durations
 * are counted from the first request on, so a dashboard nobody scrapes listens to nothing.
 */
export class MetricsEndpoint {
  private durations: Map<string, DurationHistogram> | null = null;
  private readonly stops: Array<() => void> = [];

  constructor(private readonly sources: readonly NamedMetrics[]) {}

  text(): string {
    const durations = this.listen();
    return formatFamilies(
      prometheusFamilies(
        this.sources.map(({ name, metrics }) => ({
          labels: { dispatcher: name },
          metrics,
          // The hot keys' names are not labels here: each would be a series of its own.
          hotKeyLabels: 0,
          durations: durations.get(name),
        })),
        DEFAULT_PREFIX,
      ),
    );
  }

  close(): void {
    for (const stop of this.stops) stop();
    this.stops.length = 0;
  }

  private listen(): Map<string, DurationHistogram> {
    if (this.durations !== null) return this.durations;
    this.durations = new Map();
    for (const { name, metrics } of this.sources) {
      const histogram = new DurationHistogram();
      this.durations.set(name, histogram);
      this.stops.push(metrics.onHandlerDuration((ms) => histogram.record(ms)));
    }
    return this.durations;
  }
}
