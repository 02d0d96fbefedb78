import { DispatchMetrics, fromIterable, KeyedExecutor, keyedDispatch } from 'keyed-dispatch';
import { serveDashboard } from 'keyed-dispatch/dashboard';
import { exportToPrometheus } from 'keyed-dispatch/prometheus';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { EMPTY, type Observable, Subject } from 'rxjs';
import { faultyTransport } from '../dashboard/faulty-transport';
import { laggingTransport, partitionLag } from '../support/lagging-transport';
import { type ParsedFamily, parsePrometheusText } from '../support/prometheus-text';

/**
 * Labels whose values are bounded: the export's own (`dispatcher`), and the instruments'. The lag's
 * name a partition, stream or consumer of the receiver's assignment.
 */
const LAG_LABELS = ['transport', 'source', 'partition', 'consumer'];
const BOUNDED_LABELS = ['dispatcher', 'executor', 'lane', 'operation', 'outcome', 'le', ...LAG_LABELS];

/** Every family of both exports with samples in each (lanes, faults, durations), as text and parsed. */
async function scrapeAll() {
  const metrics = new DispatchMetrics({ sampleEvery: 1 });
  const feed = new DispatchMetrics();
  const billing = new DispatchMetrics();
  const registry = new Registry();
  const stops = [
    exportToPrometheus(metrics, registry, { labels: { dispatcher: 'orders' } }),
    exportToPrometheus(feed, registry, { labels: { dispatcher: 'feed' } }),
    exportToPrometheus(billing, registry, { labels: { dispatcher: 'billing' } }),
  ];
  const dashboard = await serveDashboard({ sources: { orders: metrics, feed, billing } });
  const served = async () => (await fetch(new URL('/metrics', dashboard.url))).text();
  await served(); // the endpoint counts durations from its first scrape on
  // 'held' stays in flight while scraped, so that a hot key is there to be labelled.
  const held = new Subject<void>();
  fromIterable(['a', 'b', 'held', 'a'])
    .pipe(
      keyedDispatch({
        executor: new KeyedExecutor({ lanes: 2 }),
        stats: metrics,
        key: (k) => k,
        handle: (k): Observable<void> => (k === 'held' ? held : EMPTY),
      }),
    )
    .subscribe();
  const transport = faultyTransport(feed);
  transport.fail('fetch');
  const lagging = laggingTransport(billing, [
    partitionLag('payments', 0, 3),
    { ...partitionLag('refunds', 0, 2), transport: 'redis', partition: null, consumer: 'billing' },
  ]);
  const texts = { registry: await registry.metrics(), dashboard: await served() };
  held.complete();
  transport.stop();
  lagging.stop();
  for (const stop of stops) stop();
  await dashboard.close();
  return texts;
}

let texts: { registry: string; dashboard: string };
beforeAll(async () => {
  texts = await scrapeAll();
});

const familiesOf = (text: string) => [...parsePrometheusText(text).values()];
const labelNames = (family: ParsedFamily) =>
  [...new Set(family.samples.flatMap((s) => Object.keys(s.labels)))].filter((n) => n !== 'le').sort();

describe('Prometheus naming conventions', () => {
  it.each(['registry', 'dashboard'] as const)(
    'gives every family of the %s export a HELP and a TYPE line before its samples',
    (source) => {
      const lines = texts[source].split('\n');
      for (const family of familiesOf(texts[source])) {
        const type = lines.indexOf(`# TYPE ${family.name} ${family.type}`);
        expect(lines[type - 1]).toMatch(new RegExp(`^# HELP ${family.name} \\S`));
      }
    },
  );

  it.each(['registry', 'dashboard'] as const)(
    'names the %s export in snake_case, _total on counters only, time in seconds',
    (source) => {
      for (const family of familiesOf(texts[source])) {
        expect(family.name).toMatch(/^keyed_dispatch(_[a-z0-9]+)+$/);
        expect([family.name, family.name.endsWith('_total')]).toEqual([
          family.name,
          family.type === 'counter',
        ]);
        if (/_(time|duration)(_|$)/.test(family.name)) expect(family.name).toMatch(/_seconds(_total)?$/);
        expect(family.name).not.toMatch(/_(ms|milliseconds|millis|us|ns)(_|$)/);
      }
    },
  );

  it.each(['registry', 'dashboard'] as const)(
    'uses only labels with bounded values in the %s export: no key label by default',
    (source) => {
      for (const family of familiesOf(texts[source])) {
        for (const sample of family.samples) {
          for (const name of Object.keys(sample.labels)) expect(BOUNDED_LABELS).toContain(name);
        }
      }
    },
  );

  it.each(['registry', 'dashboard'] as const)(
    'labels transport lag in the %s export only with what names a source: one series per partition or stream',
    (source) => {
      const lag = familiesOf(texts[source]).find((f) => f.name === 'keyed_dispatch_transport_lag');
      expect(lag?.type).toBe('gauge');
      expect(lag?.samples.map((s) => [s.labels, s.value])).toEqual([
        [{ dispatcher: 'billing', transport: 'kafka', source: 'payments', partition: '0', consumer: '' }, 3],
        [
          {
            dispatcher: 'billing',
            transport: 'redis',
            source: 'refunds',
            partition: '',
            consumer: 'billing',
          },
          2,
        ],
      ]);
    },
  );

  it("registers the dashboard's families in prom-client's own registry, as the same types with the same labels as exportToPrometheus", async () => {
    const registry = new Registry();
    for (const family of familiesOf(texts.dashboard)) {
      const config = {
        name: family.name,
        help: family.help,
        labelNames: labelNames(family),
        registers: [registry],
      };
      // prom-client checks the names itself, and throws on a name or label it does not accept.
      if (family.type === 'counter') new Counter(config);
      else if (family.type === 'gauge') new Gauge(config);
      else new Histogram(config);
    }
    const shape = (families: ParsedFamily[]) =>
      families.map((f) => ({ name: f.name, type: f.type, help: f.help, labels: labelNames(f) }));
    const fromExport = shape(familiesOf(texts.registry));
    const registered = (await registry.getMetricsAsJSON()).map((m) => m.name).sort();
    expect(registered).toEqual(fromExport.map((f) => f.name).sort());
    expect(shape(familiesOf(texts.dashboard))).toEqual(fromExport);
  });
});
