import type { MetricsSnapshot } from '../metrics';

/** The lag instrument's own labels: what names a source of messages. */
export const LAG_LABELS = ['transport', 'source', 'partition', 'consumer'] as const;

/**
 * `transport_lag`: one sample per source of the receiver's messages (a Kafka partition, a Redis stream,
 * a JetStream consumer), labelled with what names it. The label set stays as small as the receiver's
 * assignment: it never grows with keys or messages. (Checked as an `Instrument` where `INSTRUMENTS`
 * lists it; not typed here, which would make the two files import each other.)
 */
export const LAG_INSTRUMENT = {
  name: 'transport_lag',
  type: 'gauge' as const,
  help: 'Messages of the transport this consumer has not finished, per partition, stream or consumer',
  labels: LAG_LABELS,
  samples: (s: MetricsSnapshot) =>
    s.transportLag.map((l) => ({
      labels: {
        transport: l.transport,
        source: l.source,
        partition: l.partition === null ? '' : String(l.partition),
        consumer: l.consumer ?? '',
      },
      value: l.lag,
    })),
};
