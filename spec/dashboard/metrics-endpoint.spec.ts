import { DispatchMetrics, fromIterable, keyedDispatch } from 'keyed-dispatch';
import { type Dashboard, serveDashboard } from 'keyed-dispatch/dashboard';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text';
import { faultyTransport } from './faulty-transport';
import { gated } from './gated';

const open: Dashboard[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((d) => d.close()));
});

async function scrape(options: Parameters<typeof serveDashboard>[0]) {
  const dashboard = await serveDashboard(options);
  open.push(dashboard);
  const get = async () => {
    const response = await fetch(new URL('/metrics', dashboard.url));
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    return parsePrometheusText(await response.text());
  };
  return get;
}

describe('GET /metrics', () => {
  it('exposes every dispatcher in the Prometheus text format, labelled by name, with the values read() gives', async () => {
    const orders = new DispatchMetrics({ hotKeys: 2 });
    const billing = new DispatchMetrics();
    const run = gated(orders, ['a', 'a', 'a', 'b', 'b', 'c']);
    run.finish('c');
    const get = await scrape({ sources: { orders, billing } });
    const families = await get();
    const now = orders.read();
    const o = { dispatcher: 'orders' };
    expect(sampleValue(families, 'keyed_dispatch_in_flight', o)).toBe(now.inFlight);
    expect(sampleValue(families, 'keyed_dispatch_max_in_flight', o)).toBe(256);
    expect(sampleValue(families, 'keyed_dispatch_live_mailboxes', o)).toBe(2);
    expect(sampleValue(families, 'keyed_dispatch_overflow', o)).toBe(0);
    expect(sampleValue(families, 'keyed_dispatch_messages_admitted_total', o)).toBe(6);
    expect(sampleValue(families, 'keyed_dispatch_messages_settled_total', { ...o, outcome: 'handled' })).toBe(
      1,
    );
    expect(sampleValue(families, 'keyed_dispatch_messages_settled_total', { ...o, outcome: 'failed' })).toBe(
      0,
    );
    expect(sampleValue(families, 'keyed_dispatch_long_turns_total', o)).toBe(0);
    // Keys are not labels: the hottest key's backlog stands for them.
    expect(sampleValue(families, 'keyed_dispatch_hottest_key_backlog', o)).toBe(3);
    expect(families.get('keyed_dispatch_key_backlog')?.samples).toEqual([]);
    // Lanes are the executor's (the shared one here), listed once.
    for (const lane of now.lanes) {
      const at = { lane: String(lane.index) };
      expect(sampleValue(families, 'keyed_dispatch_lane_pinned', at)).toBe(lane.pinned);
      expect(sampleValue(families, 'keyed_dispatch_lane_ready', at)).toBe(lane.ready);
      expect(sampleValue(families, 'keyed_dispatch_lane_busy_time_seconds_total', at)).toBeGreaterThanOrEqual(
        0,
      );
    }
    expect(sampleValue(families, 'keyed_dispatch_in_flight', { dispatcher: 'billing' })).toBe(0);
    expect(families.get('keyed_dispatch_messages_settled_total')?.type).toBe('counter');
    expect(families.get('keyed_dispatch_in_flight')?.type).toBe('gauge');
    run.stop();
  });

  it('escapes dispatcher names in label values, so quotes, backslashes and line breaks come back as they were', async () => {
    const metrics = new DispatchMetrics();
    const name = 'say "hi"\\n\nkeyed_dispatch_in_flight{dispatcher="forged"} 999';
    const run = gated(metrics, ['a', 'a']);
    const families = await (await scrape({ sources: { [name]: metrics } }))();
    expect(sampleValue(families, 'keyed_dispatch_in_flight', { dispatcher: name })).toBe(2);
    expect(families.get('keyed_dispatch_in_flight')?.samples).toHaveLength(1);
    run.stop();
  });

  it('counts transport faults by operation', async () => {
    const metrics = new DispatchMetrics();
    const transport = faultyTransport(metrics);
    transport.fail('heartbeat', 3);
    transport.fail('connection');
    const families = await (await scrape({ sources: { orders: metrics } }))();
    expect(families.get('keyed_dispatch_transport_faults_total')?.type).toBe('counter');
    for (const [operation, value] of [
      ['fetch', 0],
      ['commit', 0],
      ['heartbeat', 3],
      ['connection', 1],
    ] as const) {
      expect(
        sampleValue(families, 'keyed_dispatch_transport_faults_total', { dispatcher: 'orders', operation }),
      ).toBe(value);
    }
    transport.stop();
  });

  it('counts handler durations into a histogram from the first scrape on', async () => {
    const metrics = new DispatchMetrics({ sampleEvery: 1 });
    const input = Array.from({ length: 10 }, (_, seq) => ({ key: `k${seq % 3}`, seq }));
    const run = () =>
      fromIterable(input)
        .pipe(keyedDispatch({ stats: metrics, key: (m) => m.key, handle: (m) => [m] }))
        .subscribe();
    const get = await scrape({ sources: { orders: metrics } });
    run();
    const first = await get();
    // Nothing was listening before the first scrape.
    expect(
      sampleValue(first, 'keyed_dispatch_handler_duration_seconds_count', { dispatcher: 'orders' }),
    ).toBe(0);
    run();
    const second = await get();
    const d = { dispatcher: 'orders' };
    expect(sampleValue(second, 'keyed_dispatch_handler_duration_seconds_count', d)).toBe(10);
    expect(sampleValue(second, 'keyed_dispatch_handler_duration_seconds_bucket', { ...d, le: '+Inf' })).toBe(
      10,
    );
    const buckets = second
      .get('keyed_dispatch_handler_duration_seconds')
      ?.samples.filter((s) => s.name.endsWith('_bucket'));
    const counts = (buckets ?? []).map((s) => s.value);
    expect(counts).toEqual([...counts].sort((a, b) => a - b)); // cumulative
    expect(sampleValue(second, 'keyed_dispatch_handler_duration_seconds_sum', d)).toBeGreaterThanOrEqual(0);
  });

  it('needs the token too when there is one', async () => {
    const dashboard = await serveDashboard({ sources: new DispatchMetrics(), token: 't' });
    open.push(dashboard);
    const url = new URL('/metrics', dashboard.url);
    expect((await fetch(url)).status).toBe(401);
    const text = await (await fetch(url, { headers: { Authorization: 'Bearer t' } })).text();
    expect(parsePrometheusText(text).has('keyed_dispatch_in_flight')).toBe(true);
  });
});
