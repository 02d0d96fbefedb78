import type { DurationHistogram } from './duration-histogram';
import { DURATION, INSTRUMENTS, prometheusName } from './instruments';
import { type ScrapedDispatcher, scrape } from './scrape';
import type { Family, Sample } from './text-format';

/** One dispatcher as it is exposed: what `scrape` reads, and its handler durations. */
export interface ExposedDispatcher extends ScrapedDispatcher {
  /** Handler durations counted so far; without it the histogram family lists nothing for this dispatcher. */
  readonly durations?: DurationHistogram;
}

/** Every instrument's family over all dispatchers, named with `prefix`: the same names the prom-client export registers. */
export function prometheusFamilies(dispatchers: readonly ExposedDispatcher[], prefix: string): Family[] {
  const scraped = scrape(dispatchers);
  const families: Family[] = INSTRUMENTS.map((instrument, i) => ({
    name: prometheusName(prefix, instrument),
    help: instrument.help,
    type: instrument.type,
    samples: scraped[i],
  }));
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
    name: `${prefix}_${DURATION.prometheusName}`,
    help: DURATION.help,
    type: 'histogram',
    samples: histogram,
  });
  return families;
}
