import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { DispatchMetrics } from 'keyed-dispatch';
import { serveDashboard } from 'keyed-dispatch/dashboard';
import { exportToOpenTelemetry } from 'keyed-dispatch/otel';
import { exportToPrometheus } from 'keyed-dispatch/prometheus';
import { Registry } from 'prom-client';
import type { DispatcherFrame } from '../../src/dashboard/frame';
import { EventStream } from '../dashboard/event-stream';
import { laggingTransport, partitionLag } from '../support/lagging-transport';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text';

const streamLag = {
  transport: 'redis',
  source: 'orders',
  partition: null,
  consumer: 'billing',
  lag: 7,
  committed: '1700000000000-0',
  at: 0,
};

describe('transport lag in the exports', () => {
  it('is a Prometheus gauge per partition or stream, labelled by transport, source, partition and consumer, in the registry and on /metrics', async () => {
    const registry = new Registry();
    const metrics = new DispatchMetrics();
    const stop = exportToPrometheus(metrics, registry, { labels: { dispatcher: 'orders' } });
    const transport = laggingTransport(metrics, [partitionLag('orders', 0, 3), partitionLag('orders', 1, 5)]);
    const dashboard = await serveDashboard({ sources: { orders: metrics } });
    try {
      const served = async () =>
        parsePrometheusText(await (await fetch(new URL('/metrics', dashboard.url))).text());
      for (const families of [parsePrometheusText(await registry.metrics()), await served()]) {
        expect(families.get('keyed_dispatch_transport_lag')?.type).toBe('gauge');
        const at = (partition: string) => ({
          dispatcher: 'orders',
          transport: 'kafka',
          source: 'orders',
          partition,
          consumer: '',
        });
        expect(sampleValue(families, 'keyed_dispatch_transport_lag', at('0'))).toBe(3);
        expect(sampleValue(families, 'keyed_dispatch_transport_lag', at('1'))).toBe(5);
      }

      // A partition no longer reported (revoked) leaves no series behind.
      transport.report([streamLag]);
      for (const families of [parsePrometheusText(await registry.metrics()), await served()]) {
        const samples = families.get('keyed_dispatch_transport_lag')?.samples ?? [];
        expect(samples.map((s) => [s.labels, s.value])).toEqual([
          [
            {
              dispatcher: 'orders',
              transport: 'redis',
              source: 'orders',
              partition: '',
              consumer: 'billing',
            },
            7,
          ],
        ]);
      }
    } finally {
      await dashboard.close();
      transport.stop();
      stop();
    }
  });

  it('is an OpenTelemetry gauge per partition or stream, with partition or consumer only where the transport has one', async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const provider = new MeterProvider({ readers: [reader] });
    const metrics = new DispatchMetrics();
    const stop = exportToOpenTelemetry(metrics, provider.getMeter('spec'), {
      attributes: { dispatcher: 'orders' },
    });
    const transport = laggingTransport(metrics, [partitionLag('orders', 2, 4), streamLag]);
    try {
      await reader.forceFlush();
      const lag = exporter
        .getMetrics()
        .flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics))
        .find((m) => m.descriptor.name === 'keyed_dispatch.transport.lag');
      expect(lag?.descriptor.unit).toBe('{message}');
      expect(lag?.dataPoints.map((p) => [p.attributes, p.value])).toEqual([
        [{ dispatcher: 'orders', transport: 'kafka', source: 'orders', partition: 2 }, 4],
        [{ dispatcher: 'orders', transport: 'redis', source: 'orders', consumer: 'billing' }, 7],
      ]);
    } finally {
      transport.stop();
      stop();
      await provider.shutdown();
    }
  });

  it("is in each dispatcher's dashboard frame, as the stats carry it", async () => {
    const metrics = new DispatchMetrics();
    const transport = laggingTransport(metrics, [partitionLag('orders', 0, 3), streamLag]);
    const dashboard = await serveDashboard({ sources: { orders: metrics }, periodMs: 100 });
    const stream = await EventStream.open(new URL('/events', dashboard.url).toString());
    try {
      const frame = await stream.next<DispatcherFrame>('frame');
      expect(frame.transportLag).toEqual([partitionLag('orders', 0, 3), streamLag]);
    } finally {
      stream.close();
      await dashboard.close();
      transport.stop();
    }
  });
});

describe('transport lag in the stats', () => {
  it("reads as none where the receiver's transportLag throws, and the other counters still read", () => {
    const metrics = new DispatchMetrics();
    const transport = laggingTransport(metrics, () => {
      throw new Error('no lag today');
    });
    try {
      const snapshot = metrics.read();
      expect(snapshot.transportLag).toEqual([]);
      expect(snapshot.maxInFlight).toBe(256);
    } finally {
      transport.stop();
    }
  });
});
