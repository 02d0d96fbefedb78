import { join } from 'node:path';
import {
  DispatchMetrics,
  fromIterable,
  KeyedExecutor,
  keyedDispatch,
  retryPolicy,
  ThreadExecutor,
  threadHandler,
} from 'keyed-dispatch';
import { type Dashboard, serveDashboard } from 'keyed-dispatch/dashboard';
import { exportToPrometheus, type PrometheusExportOptions } from 'keyed-dispatch/prometheus';
import { Registry } from 'prom-client';
import { defaultIfEmpty, lastValueFrom, type Observable, Subject } from 'rxjs';
import { gated, times } from '../dashboard/gated';
import { type ParsedFamily, parsePrometheusText, sampleValue } from '../support/prometheus-text';

type Families = Map<string, ParsedFamily>;

const LANE_HANDLERS = join(__dirname, '..', 'fixtures', 'lane-handlers.js');

/** A message of the fixture's handlers: `boom` throws for `n` 1. */
interface Numbered {
  key: string;
  n: number;
}

const laneKinds = [
  {
    name: 'event-loop lanes',
    executor: () => new KeyedExecutor({ lanes: 2 }),
    handle: () => require(LANE_HANDLERS).boom as (m: Numbered) => unknown[],
  },
  {
    name: 'thread lanes',
    executor: () => new ThreadExecutor({ workers: 1 }),
    handle: () => threadHandler<Numbered, unknown>(LANE_HANDLERS, 'boom'),
  },
];

const closing: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/**
 * The same dispatchers scraped both ways: through `exportToPrometheus` into a prom-client registry, and
 * from the dashboard's `GET /metrics`. Each export labels a dispatcher `dispatcher="<name>"`.
 */
async function exported(sources: Record<string, DispatchMetrics>, options: PrometheusExportOptions = {}) {
  const registry = new Registry();
  const stops = Object.entries(sources).map(([name, metrics]) =>
    exportToPrometheus(metrics, registry, { ...options, labels: { dispatcher: name } }),
  );
  const dashboard: Dashboard = await serveDashboard({ sources });
  closing.push(() => {
    for (const stop of stops) stop();
    return dashboard.close();
  });
  return {
    /** Both scrapes, the registry's first. */
    scrape: async (): Promise<Families[]> => [
      parsePrometheusText(await registry.metrics()),
      parsePrometheusText(await (await fetch(new URL('/metrics', dashboard.url))).text()),
    ],
  };
}

/** Every series of a scrape: its name and labels. */
const seriesOf = (families: Families): string[] =>
  [...families.values()].flatMap((f) => f.samples.map((s) => `${s.name}${JSON.stringify(s.labels)}`)).sort();

/** Messages of `keys` held in flight on `executor` until `release()`. */
function held(metrics: DispatchMetrics, executor: KeyedExecutor, keys: readonly string[]) {
  const gates: Subject<void>[] = [];
  const subscription = fromIterable(keys)
    .pipe(
      keyedDispatch({
        executor,
        stats: metrics,
        key: (k: string) => k,
        handle: () => {
          const gate = new Subject<void>();
          gates.push(gate);
          return gate as Observable<void>;
        },
      }),
    )
    .subscribe();
  return () => {
    for (const gate of gates) gate.complete();
    subscription.unsubscribe();
  };
}

describe('Prometheus series', () => {
  it('keeps the same series from scrape to scrape as keys come and go, with no key label by default', async () => {
    const metrics = new DispatchMetrics({ hotKeys: 3 });
    const exports = await exported({ orders: metrics });
    const first = gated(metrics, [...times(3, 'account-1'), 'account-2', 'account-3']);
    const before = await exports.scrape();
    first.stop();
    const second = gated(metrics, [...times(2, 'account-4'), 'account-5']);
    const after = await exports.scrape();
    for (const i of [0, 1]) {
      expect(seriesOf(after[i])).toEqual(seriesOf(before[i]));
      for (const family of after[i].values()) {
        for (const sample of family.samples) expect(sample.labels).not.toHaveProperty('key');
      }
      // The hottest key's backlog, without its name: enough to alert on one key holding the window.
      expect(sampleValue(before[i], 'keyed_dispatch_hottest_key_backlog', { dispatcher: 'orders' })).toBe(3);
      expect(sampleValue(after[i], 'keyed_dispatch_hottest_key_backlog', { dispatcher: 'orders' })).toBe(2);
    }
    second.stop();
  });

  it('labels at most hotKeyLabels keys when asked, the hottest first', async () => {
    const metrics = new DispatchMetrics({ hotKeys: 10 });
    const registry = new Registry();
    const stop = exportToPrometheus(metrics, registry, { hotKeyLabels: 2 });
    const run = gated(metrics, [...times(3, 'a'), ...times(2, 'b'), 'c', 'd']);
    const families = parsePrometheusText(await registry.metrics());
    expect(families.get('keyed_dispatch_key_backlog')?.samples).toEqual([
      { name: 'keyed_dispatch_key_backlog', labels: { key: 'a' }, value: 3 },
      { name: 'keyed_dispatch_key_backlog', labels: { key: 'b' }, value: 2 },
    ]);
    expect(() => exportToPrometheus(metrics, new Registry(), { hotKeyLabels: 101 })).toThrow(
      'exportToPrometheus: expected `hotKeyLabels` to be an integer from 0 to 100, got 101 (number)',
    );
    run.stop();
    stop();
  });

  it('lists each lane once per executor, labelled by executor and not by dispatcher, so sum() counts it once', async () => {
    const shared = new KeyedExecutor({ lanes: 2 });
    const own = new KeyedExecutor({ lanes: 1 });
    const orders = new DispatchMetrics();
    const billing = new DispatchMetrics();
    const audit = new DispatchMetrics();
    const releases = [
      held(orders, shared, ['a', 'b', 'c']),
      held(billing, shared, ['d', 'e']),
      held(audit, own, ['f']),
    ];
    // Thread lanes are measured in their threads: a dispatcher on them adds no lane series.
    const threads = new ThreadExecutor({ workers: 1 });
    closing.push(() => threads.close());
    const reports = new DispatchMetrics();
    await lastValueFrom(
      fromIterable([{ key: 'r', n: 0 }]).pipe(
        keyedDispatch({
          executor: threads,
          stats: reports,
          key: (m: Numbered) => m.key,
          handle: threadHandler<Numbered, unknown>(LANE_HANDLERS, 'echo'),
        }),
      ),
    );
    const exports = await exported({ orders, billing, audit, reports });
    for (const families of await exports.scrape()) {
      for (const name of ['keyed_dispatch_lane_ready', 'keyed_dispatch_lane_pinned']) {
        const samples = families.get(name)?.samples ?? [];
        expect(samples.map((s) => Object.keys(s.labels).sort())).toEqual(
          times(3, 'executor,lane').map((l) => l.split(',')),
        );
      }
      const pinned = families.get('keyed_dispatch_lane_pinned')?.samples ?? [];
      const executors = new Set(pinned.map((s) => s.labels.executor));
      expect(executors.size).toBe(2);
      // Every live mailbox once: 3 + 2 on the shared executor, 1 on the other.
      expect(pinned.reduce((sum, s) => sum + s.value, 0)).toBe(6);
      expect(families.get('keyed_dispatch_lane_busy_time_seconds_total')?.samples).toHaveLength(3);
    }
    for (const release of releases) release();
  });

  it.each(laneKinds)(
    'counts settled messages by outcome (handled, dead_lettered, failed), and failed attempts, on $name',
    async (kind) => {
      const executor = kind.executor();
      closing.push(() => executor.close());
      const withDeadLetter = new DispatchMetrics();
      const without = new DispatchMetrics();
      const run = (metrics: DispatchMetrics, deadLetter?: () => void) =>
        lastValueFrom(
          fromIterable(['ok', 'bad', 'ok', 'bad', 'ok'].map((key) => ({ key, n: key === 'bad' ? 1 : 0 })))
            .pipe(
              keyedDispatch({
                executor,
                stats: metrics,
                key: (m: Numbered) => m.key,
                failurePolicy: retryPolicy({ maxAttempts: 2, backoff: { initialMs: 0 }, deadLetter }),
                handle: kind.handle(),
              }),
            )
            .pipe(defaultIfEmpty(null)),
        );
      await run(withDeadLetter, () => {});
      await run(without);
      expect(withDeadLetter.snapshot()).toMatchObject({ failed: 2, deadLettered: 2, failedAttempts: 4 });
      expect(without.snapshot()).toMatchObject({ failed: 2, deadLettered: 0, failedAttempts: 4 });
      const exports = await exported({ withDeadLetter, without });
      for (const families of await exports.scrape()) {
        const settled = (dispatcher: string, outcome: string) =>
          sampleValue(families, 'keyed_dispatch_messages_settled_total', { dispatcher, outcome });
        expect(settled('withDeadLetter', 'handled')).toBe(3);
        expect(settled('withDeadLetter', 'dead_lettered')).toBe(2);
        expect(settled('withDeadLetter', 'failed')).toBe(0);
        expect(settled('without', 'handled')).toBe(3);
        expect(settled('without', 'dead_lettered')).toBe(0);
        expect(settled('without', 'failed')).toBe(2);
        // Two attempts for each bad message.
        expect(
          sampleValue(families, 'keyed_dispatch_failed_attempts_total', { dispatcher: 'withDeadLetter' }),
        ).toBe(4);
        expect(families.has('keyed_dispatch_messages_failed_total')).toBe(false);
      }
    },
  );

  it('names the window after its option: keyed_dispatch_max_in_flight', async () => {
    const metrics = new DispatchMetrics();
    const exports = await exported({ orders: metrics });
    const run = gated(metrics, ['a'], 64);
    for (const families of await exports.scrape()) {
      expect(sampleValue(families, 'keyed_dispatch_max_in_flight', { dispatcher: 'orders' })).toBe(64);
      expect(families.has('keyed_dispatch_window')).toBe(false);
    }
    run.stop();
  });
});
