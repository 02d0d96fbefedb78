import type { DispatchMetrics } from '../metrics';
import { executorsOf } from '../metrics/executor-lanes';
import {
  EXECUTOR_LABEL,
  type ExportLimits,
  INSTRUMENTS,
  type Instrument,
  type InstrumentSample,
  labelsOf,
} from './instruments';
import type { Labels, Sample } from './text-format';

/** One dispatcher as an export shows it: its labels (e.g. `{ dispatcher: 'orders' }`) and its limits. */
export interface ScrapedDispatcher extends ExportLimits {
  readonly labels: Labels;
  readonly metrics: DispatchMetrics;
}

/**
 * Every instrument's samples now (in `INSTRUMENTS` order), fully labelled: one `read()` per dispatcher,
 * and each executor's lanes once however many dispatchers share it. Shared by the dashboard's
 * `/metrics` and the prom-client export, so both list the same series.
 */
export function scrape(dispatchers: readonly ScrapedDispatcher[]): Sample[][] {
  const read = dispatchers.map((d) => ({ d, snapshot: d.metrics.read() }));
  const executors = executorsOf(dispatchers.map((d) => d.metrics));
  return INSTRUMENTS.map((instrument) => {
    if (instrument.per === 'executor') {
      return executors.flatMap((e) =>
        labelled(instrument, { [EXECUTOR_LABEL]: e.executor }, instrument.samples(e)),
      );
    }
    return read.flatMap(({ d, snapshot }) => labelled(instrument, d.labels, instrument.samples(snapshot, d)));
  });
}

function labelled(instrument: Instrument, labels: Labels, samples: readonly InstrumentSample[]): Sample[] {
  return samples.map((s) => ({ labels: labelsOf(instrument, labels, s), value: s.value }));
}
