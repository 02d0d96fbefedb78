import type { MetricsSnapshot } from '../metrics';
import type { DurationHistogram } from './duration-histogram';
import { DURATION, INSTRUMENTS, labelsOf } from './instruments';
import type { Family, Labels, Sample } from './text-format';

/** One dispatcher as it is exposed: its labels (e.g. `{ dispatcher: 'orders' }`), its metrics now, its durations. */
export interface ExposedDispatcher {
  readonly labels: Labels;
  readonly snapshot: MetricsSnapshot;
  /** Handler durations counted so far; without it the histogram family lists nothing for this dispatcher. */
  readonly durations?: DurationHistogram;
}

/** Every instrument's family over all dispatchers, named with `prefix`: the same names the prom-client export registers. */
export function prometheusFamilies(dispatchers: readonly ExposedDispatcher[], prefix: string): Family[] {
  const families: Family[] = INSTRUMENTS.map((instrument) => {
    const samples: Sample[] = [];
    for (const d of dispatchers) {
      for (const sample of instrument.samples(d.snapshot)) {
        samples.push({ labels: labelsOf(instrument, d.labels, sample), value: sample.value });
      }
    }
    return { name: `${prefix}_${instrument.name}`, help: instrument.help, type: instrument.type, samples };
  });
  const histogram: Sample[] = [];
  for (const d of dispatchers) {
    if (d.durations === undefined) continue;
    for (const [bound, count] of d.durations.cumulative()) {
      const le = bound === Number.POSITIVE_INFINITY ? '+Inf' : String(bound);
      histogram.push({ labels: { ...d.labels, le }, value: count, suffix: '_bucket' });
    }
    histogram.push({ labels: d.labels, value: d.durations.sum, suffix: '_sum' });
    histogram.push({ labels: d.labels, value: d.durations.count, suffix: '_count' });
  }
  families.push({
    name: `${prefix}_${DURATION.name}`,
    help: DURATION.help,
    type: 'histogram',
    samples: histogram,
  });
  return families;
}
