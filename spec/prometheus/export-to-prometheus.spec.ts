import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { DispatchMetrics, fromIterable, keyedDispatch } from 'keyed-dispatch';
import { serveDashboard } from 'keyed-dispatch/dashboard';
import { exportToOpenTelemetry } from 'keyed-dispatch/otel';
import { exportToPrometheus } from 'keyed-dispatch/prometheus';
import { Registry } from 'prom-client';
import { faultyTransport } from '../dashboard/faulty-transport';
import { gated, times } from '../dashboard/gated';
import { laggingTransport, partitionLag } from '../support/lagging-transport';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text';

const scrape = async (registry: Registry) => parsePrometheusText(await registry.metrics());

/** The Prometheus names an OpenTelemetry Prometheus exporter gives the instruments of `exportToOpenTelemetry`. */
async function openTelemetryNames(): Promise<string[]> {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ readers: [reader] });
  const metrics = new DispatchMetrics({ sampleEvery: 1 });
  const stop = exportToOpenTelemetry(metrics, provider.getMeter('spec'), { hotKeyLabels: 1 });
  const run = gated(metrics, ['a', 'b']);
  // A transport's lag is observed only where a receiver reports one: a second dispatcher's.
  const laggingMetrics = new DispatchMetrics();
  const stopLagging = exportToOpenTelemetry(laggingMetrics, provider.getMeter('spec-lag'));
  const lagging = laggingTransport(laggingMetrics, [partitionLag('orders', 0, 1)]);
  run.finish('a');
  await reader.forceFlush();
  const names = exporter
    .getMetrics()
    .flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics))
    .map((m) => {
      const unit = m.descriptor.unit === 's' ? '_seconds' : '';
      const total = m.dataPointType === DataPointType.SUM && m.isMonotonic ? '_total' : '';
      return `${m.descriptor.name.replace(/\./g, '_')}${unit}${total}`;
    });
  run.stop();
  lagging.stop();
  stopLagging();
  stop();
  await provider.shutdown();
  return [...new Set(names)].sort();
}

describe('exportToPrometheus', () => {
  it('registers the names of the OpenTelemetry export as a Prometheus exporter writes them, and of the dashboard', async () => {
    const registry = new Registry();
    const metrics = new DispatchMetrics();
    const stop = exportToPrometheus(metrics, registry, { labels: { dispatcher: 'orders' }, hotKeyLabels: 1 });
    const run = gated(metrics, ['a']);
    const registered = [...(await scrape(registry)).keys()].sort();
    expect(registered).toEqual(await openTelemetryNames());

    const dashboard = await serveDashboard({ sources: { orders: metrics } });
    const served = parsePrometheusText(await (await fetch(new URL('/metrics', dashboard.url))).text());
    expect([...served.keys()].sort()).toEqual(registered);
    for (const [name, family] of served) expect((await scrape(registry)).get(name)?.type).toBe(family.type);
    await dashboard.close();
    run.stop();
    stop();
  });

  it('reports the values read() gives, one read per dispatcher per scrape', async () => {
    const registry = new Registry();
    const metrics = new DispatchMetrics({ hotKeys: 2 });
    const reads = jest.spyOn(metrics, 'read');
    const stop = exportToPrometheus(metrics, registry, { labels: { dispatcher: 'orders' }, hotKeyLabels: 2 });
    const run = gated(metrics, ['a', 'a', 'a', 'b', 'b', 'c']);
    run.finish('c');
    const families = await scrape(registry);
    expect(reads).toHaveBeenCalledTimes(1);
    const o = { dispatcher: 'orders' };
    expect(sampleValue(families, 'keyed_dispatch_in_flight', o)).toBe(5);
    expect(sampleValue(families, 'keyed_dispatch_max_in_flight', o)).toBe(256);
    expect(sampleValue(families, 'keyed_dispatch_messages_admitted_total', o)).toBe(6);
    expect(sampleValue(families, 'keyed_dispatch_messages_settled_total', { ...o, outcome: 'handled' })).toBe(
      1,
    );
    expect(sampleValue(families, 'keyed_dispatch_key_backlog', { ...o, key: 'a' })).toBe(3);
    expect(sampleValue(families, 'keyed_dispatch_key_backlog', { ...o, key: 'b' })).toBe(2);
    expect(sampleValue(families, 'keyed_dispatch_lane_pinned', { lane: '0' })).toBe(
      metrics.read().lanes[0].pinned,
    );
    run.stop();
    stop();
  });

  it('labels only the current top hotKeyLabels keys when asked, as keys come and go', async () => {
    const registry = new Registry();
    const metrics = new DispatchMetrics({ hotKeys: 5 });
    const stop = exportToPrometheus(metrics, registry, { hotKeyLabels: 3 });
    const keys = (families: Awaited<ReturnType<typeof scrape>>) =>
      (families.get('keyed_dispatch_key_backlog')?.samples ?? []).map((s) => s.labels.key);
    const first = gated(metrics, [...times(5, 'x'), ...Array.from({ length: 50 }, (_, i) => `k${i}`)]);
    expect(keys(await scrape(registry))).toEqual(['x', 'k0', 'k1']);
    first.stop();
    const second = gated(metrics, [...times(4, 'y'), ...times(2, 'z')]);
    expect(keys(await scrape(registry))).toEqual(['y', 'z']);
    second.stop();
    stop();
  });

  it('labels keys that have no text form (no prototype, a throwing toString) by their tag, one sample per label', async () => {
    const registry = new Registry();
    const metrics = new DispatchMetrics();
    const stop = exportToPrometheus(metrics, registry, { hotKeyLabels: 10 });
    const throwing = {
      toString() {
        throw new Error('no text');
      },
    };
    const run = gated(metrics, [Object.create(null), throwing, throwing, 'plain']);
    const families = await scrape(registry);
    expect(families.get('keyed_dispatch_key_backlog')?.samples).toEqual([
      { name: 'keyed_dispatch_key_backlog', labels: { key: '[object Object]' }, value: 3 },
      { name: 'keyed_dispatch_key_backlog', labels: { key: 'plain' }, value: 1 },
    ]);
    run.stop();
    stop();
  });

  it('counts transport faults by operation', async () => {
    const registry = new Registry();
    const metrics = new DispatchMetrics();
    const stop = exportToPrometheus(metrics, registry, { labels: { dispatcher: 'orders' } });
    const transport = faultyTransport(metrics);
    transport.fail('fetch', 2);
    transport.fail('commit');
    let families = await scrape(registry);
    expect(families.get('keyed_dispatch_transport_faults_total')?.type).toBe('counter');
    const at = (operation: string) => ({ dispatcher: 'orders', operation });
    expect(sampleValue(families, 'keyed_dispatch_transport_faults_total', at('fetch'))).toBe(2);
    expect(sampleValue(families, 'keyed_dispatch_transport_faults_total', at('commit'))).toBe(1);
    expect(sampleValue(families, 'keyed_dispatch_transport_faults_total', at('heartbeat'))).toBe(0);
    expect(sampleValue(families, 'keyed_dispatch_transport_faults_total', at('connection'))).toBe(0);
    transport.fail('fetch');
    families = await scrape(registry);
    expect(sampleValue(families, 'keyed_dispatch_transport_faults_total', at('fetch'))).toBe(3);
    transport.stop();
    stop();
  });

  it('exports several dispatchers into one registry, told apart by their labels', async () => {
    const registry = new Registry();
    const orders = new DispatchMetrics();
    const billing = new DispatchMetrics();
    const stopOrders = exportToPrometheus(orders, registry, { labels: { dispatcher: 'orders' } });
    const stopBilling = exportToPrometheus(billing, registry, { labels: { dispatcher: 'billing' } });
    const run = gated(billing, ['a', 'a']);
    let families = await scrape(registry);
    expect(sampleValue(families, 'keyed_dispatch_in_flight', { dispatcher: 'orders' })).toBe(0);
    expect(sampleValue(families, 'keyed_dispatch_in_flight', { dispatcher: 'billing' })).toBe(2);
    expect(() => exportToPrometheus(new DispatchMetrics(), registry, { labels: { service: 'x' } })).toThrow(
      'exportToPrometheus: expected `labels` to have the label names of the dispatchers already exported into this registry (dispatcher), got service',
    );
    expect(() =>
      exportToPrometheus(new DispatchMetrics(), registry, { labels: { dispatcher: 'orders' } }),
    ).toThrow(
      'exportToPrometheus: expected `labels` to tell this dispatcher apart from the ones already exported into this registry, got {"dispatcher":"orders"}',
    );
    stopOrders();
    families = await scrape(registry);
    expect(families.get('keyed_dispatch_in_flight')?.samples.map((s) => s.labels.dispatcher)).toEqual([
      'billing',
    ]);
    stopBilling();
    expect(await registry.metrics()).toBe('\n');
    run.stop();
  });

  it('records timed handler durations into a histogram in seconds', async () => {
    const registry = new Registry();
    const metrics = new DispatchMetrics({ sampleEvery: 2 });
    const stop = exportToPrometheus(metrics, registry);
    fromIterable(Array.from({ length: 10 }, (_, seq) => ({ key: `k${seq % 3}`, seq })))
      .pipe(keyedDispatch({ stats: metrics, key: (m) => m.key, handle: (m) => [m] }))
      .subscribe();
    const families = await scrape(registry);
    expect(sampleValue(families, 'keyed_dispatch_handler_duration_seconds_count')).toBe(5);
    expect(sampleValue(families, 'keyed_dispatch_handler_duration_seconds_sum')).toBeCloseTo(
      (metrics.read().latency.meanMs * 5) / 1000,
      9,
    );
    stop();
  });

  it('names the option, the value and its type when an argument is wrong', () => {
    const registry = new Registry();
    const metrics = new DispatchMetrics();
    expect(() => exportToPrometheus({} as never, registry)).toThrow(
      'exportToPrometheus: expected `metrics` to be a DispatchMetrics, got an object (object)',
    );
    expect(() => exportToPrometheus(metrics, null as never)).toThrow(
      'exportToPrometheus: expected `registry` to be a prom-client Registry, got null',
    );
    expect(() => exportToPrometheus(metrics, registry, { prefix: 'bad-name' })).toThrow(
      "exportToPrometheus: expected `prefix` to be a Prometheus metric name, got 'bad-name' (string)",
    );
    expect(() => exportToPrometheus(metrics, registry, { labels: { key: 'x' } })).toThrow(
      "exportToPrometheus: expected the names in `labels` to be Prometheus label names other than outcome, key, operation, transport, source, partition, consumer, lane, executor, le and quantile, got 'key' (string)",
    );
    expect(() => exportToPrometheus(metrics, registry, { labels: { team: 7 as never } })).toThrow(
      'exportToPrometheus: expected `labels.team` to be a string, got 7 (number)',
    );
  });
});
