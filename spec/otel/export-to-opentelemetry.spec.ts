import type { Attributes } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  type MetricData,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { DispatchMetrics, fromIterable, KeyedExecutor, keyedDispatch } from 'keyed-dispatch';
import { exportToOpenTelemetry } from 'keyed-dispatch/otel';
import { type Observable, Subject } from 'rxjs';
import { faultyTransport } from '../dashboard/faulty-transport';

interface Message {
  key: string;
  seq: number;
}

/** A real SDK pipeline: MeterProvider → periodic reader (flushed by hand) → in-memory exporter. */
function sdk() {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ readers: [reader] });
  const collect = async (): Promise<MetricData[]> => {
    exporter.reset();
    await reader.forceFlush();
    return exporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
  };
  return { meter: provider.getMeter('spec'), collect, shutdown: () => provider.shutdown() };
}

const points = (data: MetricData[], name: string): Array<{ value: unknown; attributes: Attributes }> =>
  (data.find((m) => m.descriptor.name === name)?.dataPoints ?? []).map((p) => ({
    value: p.value,
    attributes: p.attributes,
  }));

describe('exportToOpenTelemetry', () => {
  it('publishes counters, gauges, hot-key backlogs and lane depths through a real MeterProvider', async () => {
    const { meter, collect, shutdown } = sdk();
    const metrics = new DispatchMetrics({ hotKeys: 1 });
    const stop = exportToOpenTelemetry(metrics, meter, {
      attributes: { dispatcher: 'orders' },
      hotKeyLabels: 1,
    });
    const gates: Subject<void>[] = [];
    const executor = new KeyedExecutor({ lanes: 2 });
    const subscription = fromIterable<Message>([
      { key: 'a', seq: 0 },
      { key: 'a', seq: 1 },
      { key: 'a', seq: 2 },
      { key: 'b', seq: 3 },
    ])
      .pipe(
        keyedDispatch({
          executor,
          stats: metrics,
          key: (m: Message) => m.key,
          handle: () => {
            const gate = new Subject<void>();
            gates.push(gate);
            return gate as Observable<void>;
          },
        }),
      )
      .subscribe();
    gates[1].complete(); // b's handler (a's first is gates[0])

    const data = await collect();
    const orders = { dispatcher: 'orders' };
    expect(points(data, 'keyed_dispatch.in_flight')).toEqual([{ value: 3, attributes: orders }]);
    expect(points(data, 'keyed_dispatch.max_in_flight')).toEqual([{ value: 256, attributes: orders }]);
    expect(points(data, 'keyed_dispatch.live_mailboxes')).toEqual([{ value: 1, attributes: orders }]);
    expect(points(data, 'keyed_dispatch.messages.admitted')).toEqual([{ value: 4, attributes: orders }]);
    expect(points(data, 'keyed_dispatch.messages.settled')).toEqual([
      { value: 1, attributes: { ...orders, outcome: 'handled' } },
      { value: 0, attributes: { ...orders, outcome: 'dead_lettered' } },
      { value: 0, attributes: { ...orders, outcome: 'failed' } },
    ]);
    expect(points(data, 'keyed_dispatch.failed_attempts')).toEqual([{ value: 0, attributes: orders }]);
    expect(points(data, 'keyed_dispatch.hottest_key.backlog')).toEqual([{ value: 3, attributes: orders }]);
    expect(points(data, 'keyed_dispatch.key.backlog')).toEqual([
      { value: 3, attributes: { ...orders, key: 'a' } },
    ]);
    // Lanes belong to the executor: labelled by it, not by the dispatcher.
    const lanes = points(data, 'keyed_dispatch.lane.pinned').map((p) => p.attributes);
    expect(lanes.map((a) => Object.keys(a).sort())).toEqual([
      ['executor', 'lane'],
      ['executor', 'lane'],
    ]);
    expect(lanes.map((a) => a.lane)).toEqual(['0', '1']);
    expect(points(data, 'keyed_dispatch.lane.ready').every((p) => p.value === 0)).toBe(true);

    subscription.unsubscribe();
    stop();
    await shutdown();
  });

  it('gives keys that have no text form (no prototype, a throwing toString) their tag as the key attribute, one point per value', async () => {
    const { meter, collect, shutdown } = sdk();
    const metrics = new DispatchMetrics();
    const stop = exportToOpenTelemetry(metrics, meter, { hotKeyLabels: 10 });
    const throwing = {
      toString() {
        throw new Error('no text');
      },
    };
    const keys: unknown[] = [Object.create(null), throwing, throwing, 'plain'];
    const subscription = fromIterable(keys)
      .pipe(keyedDispatch({ stats: metrics, key: (k: unknown) => k, handle: () => new Subject<void>() }))
      .subscribe();
    expect(points(await collect(), 'keyed_dispatch.key.backlog')).toEqual([
      { value: 3, attributes: { key: '[object Object]' } },
      { value: 1, attributes: { key: 'plain' } },
    ]);
    subscription.unsubscribe();
    stop();
    await shutdown();
  });

  it('publishes each lane once per executor, whichever dispatchers share it, and labels no key by default', async () => {
    const { meter, collect, shutdown } = sdk();
    const executor = new KeyedExecutor({ lanes: 2 });
    const exported = ['orders', 'billing'].map((dispatcher) => {
      const metrics = new DispatchMetrics();
      const stop = exportToOpenTelemetry(metrics, meter, { attributes: { dispatcher } });
      const subscription = fromIterable<Message>([
        { key: `${dispatcher}-1`, seq: 0 },
        { key: `${dispatcher}-2`, seq: 1 },
      ])
        .pipe(
          keyedDispatch({
            executor,
            stats: metrics,
            key: (m: Message) => m.key,
            handle: () => new Subject<void>(),
          }),
        )
        .subscribe();
      return { stop, subscription };
    });
    const data = await collect();
    const pinned = points(data, 'keyed_dispatch.lane.pinned');
    expect(pinned).toHaveLength(2);
    expect(pinned.reduce((sum, p) => sum + (p.value as number), 0)).toBe(4);
    expect(points(data, 'keyed_dispatch.key.backlog')).toEqual([]);
    for (const { stop, subscription } of exported) {
      subscription.unsubscribe();
      stop();
    }
    await shutdown();
  });

  it('counts transport faults by operation', async () => {
    const { meter, collect, shutdown } = sdk();
    const metrics = new DispatchMetrics();
    const stop = exportToOpenTelemetry(metrics, meter, { attributes: { dispatcher: 'orders' } });
    const transport = faultyTransport(metrics);
    transport.fail('fetch', 2);
    transport.fail('heartbeat');
    const data = await collect();
    expect(data.find((m) => m.descriptor.name === 'keyed_dispatch.transport.faults')?.descriptor.unit).toBe(
      '{fault}',
    );
    expect(points(data, 'keyed_dispatch.transport.faults')).toEqual([
      { value: 2, attributes: { dispatcher: 'orders', operation: 'fetch' } },
      { value: 0, attributes: { dispatcher: 'orders', operation: 'commit' } },
      { value: 1, attributes: { dispatcher: 'orders', operation: 'heartbeat' } },
      { value: 0, attributes: { dispatcher: 'orders', operation: 'connection' } },
    ]);
    transport.stop();
    stop();
    await shutdown();
  });

  it('records timed handler durations into an OpenTelemetry histogram in seconds', async () => {
    const { meter, collect, shutdown } = sdk();
    const metrics = new DispatchMetrics({ sampleEvery: 2 });
    const stop = exportToOpenTelemetry(metrics, meter);
    fromIterable<Message>(Array.from({ length: 10 }, (_, seq) => ({ key: `k${seq % 3}`, seq })))
      .pipe(keyedDispatch({ stats: metrics, key: (m: Message) => m.key, handle: (m: Message) => [m] }))
      .subscribe();
    const [point] = points(await collect(), 'keyed_dispatch.handler.duration');
    const histogram = point.value as { count: number; sum: number };
    expect(histogram.count).toBe(5);
    expect(histogram.sum).toBeCloseTo((metrics.read().latency.meanMs * 5) / 1000, 9);
    stop();
    await shutdown();
  });

  it('stops publishing when its stop function is called', async () => {
    const { meter, collect, shutdown } = sdk();
    const metrics = new DispatchMetrics();
    const stop = exportToOpenTelemetry(metrics, meter);
    expect(points(await collect(), 'keyed_dispatch.in_flight')).toEqual([{ value: 0, attributes: {} }]);
    stop();
    const subscription = fromIterable<Message>([{ key: 'a', seq: 0 }])
      .pipe(keyedDispatch({ stats: metrics, key: (m: Message) => m.key, handle: () => new Subject<void>() }))
      .subscribe();
    expect(metrics.read().inFlight).toBe(1);
    const after = await collect();
    expect(points(after, 'keyed_dispatch.in_flight')).not.toContainEqual({ value: 1, attributes: {} });
    expect(points(after, 'keyed_dispatch.messages.admitted')).not.toContainEqual({
      value: 1,
      attributes: {},
    });
    subscription.unsubscribe();
    await shutdown();
  });

  it('rejects something that is not a Meter, naming the option', () => {
    expect(() => exportToOpenTelemetry(new DispatchMetrics(), null as never)).toThrow(
      'exportToOpenTelemetry: expected `meter` to be an OpenTelemetry Meter, got null',
    );
  });
});
