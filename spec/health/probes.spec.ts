import { DispatchMetrics, keyedDispatch, LocalBus } from 'keyed-dispatch';
import { type Dashboard, serveDashboard } from 'keyed-dispatch/dashboard';
import type { Subscription } from 'rxjs';
import { exchange } from '../dashboard/raw-http';

const open: Dashboard[] = [];
const running: Subscription[] = [];
afterEach(async () => {
  for (const subscription of running.splice(0)) subscription.unsubscribe();
  await Promise.all(open.splice(0).map((d) => d.close()));
});

async function serve(options: Parameters<typeof serveDashboard>[0]): Promise<Dashboard> {
  const dashboard = await serveDashboard(options);
  open.push(dashboard);
  return dashboard;
}

/** `GET path` of the dashboard, with the token of its URL when it has one: status, type and JSON body. */
async function probe(dashboard: Dashboard, path: string) {
  const url = new URL(path, dashboard.url);
  url.search = new URL(dashboard.url).search;
  const response = await fetch(url);
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    cache: response.headers.get('cache-control'),
    body: await response.json(),
  };
}

/** A dispatcher on a bus, counted in `metrics`. */
function runOn(metrics: DispatchMetrics): void {
  const bus = new LocalBus<string>();
  running.push(
    bus
      .receive()
      .pipe(keyedDispatch({ key: (m) => m, handle: () => [], stats: metrics }))
      .subscribe(),
  );
}

describe('serveDashboard /livez and /readyz', () => {
  it('answer 200 with a JSON body while the dispatcher runs, and /readyz 503 naming the reason once it stopped, /livez still 200', async () => {
    const orders = new DispatchMetrics();
    runOn(orders);
    const dashboard = await serve({ sources: { orders } });
    expect(await probe(dashboard, '/livez')).toEqual({
      status: 200,
      type: 'application/json',
      cache: 'no-store',
      body: { live: true, reasons: [] },
    });
    expect(await probe(dashboard, '/readyz')).toMatchObject({
      status: 200,
      body: { ready: true, reasons: [] },
    });
    for (const subscription of running.splice(0)) subscription.unsubscribe();
    expect(await probe(dashboard, '/readyz')).toEqual({
      status: 503,
      type: 'application/json',
      cache: 'no-store',
      body: {
        ready: false,
        reasons: [
          { source: 'orders', fails: 'ready', problem: 'ended', detail: 'it was unsubscribed (stopped)' },
        ],
      },
    });
    expect(await probe(dashboard, '/livez')).toMatchObject({ status: 200, body: { live: true } });
  });

  it('answer /livez 503 naming a stalled dispatcher, by the bounds of the health option', async () => {
    const metrics = new DispatchMetrics();
    const bus = new LocalBus<string>();
    void bus.send('stuck');
    running.push(
      bus
        .receive()
        .pipe(
          keyedDispatch({ key: (m) => m, handle: () => new Promise<never>(() => undefined), stats: metrics }),
        )
        .subscribe(),
    );
    const dashboard = await serve({ sources: metrics, health: { stallMs: 50 } });
    expect((await probe(dashboard, '/livez')).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const answer = await probe(dashboard, '/livez');
    expect(answer).toMatchObject({
      status: 503,
      body: { live: false, reasons: [{ source: 'dispatcher', fails: 'live', problem: 'stalled' }] },
    });
  });

  it('keep the security defaults: the token, the Host check and GET or HEAD only', async () => {
    const dashboard = await serve({ sources: new DispatchMetrics(), token: 't0ken' });
    const port = Number(new URL(dashboard.url).port);
    const ask = (line: string, headers = '') =>
      exchange(port, `${line}\r\nHost: 127.0.0.1:${port}\r\n${headers}Connection: close\r\n\r\n`);
    expect((await ask('GET /livez HTTP/1.1')).status).toBe(401);
    expect((await ask('GET /readyz HTTP/1.1')).status).toBe(401);
    expect((await ask('GET /livez HTTP/1.1', 'Authorization: Bearer t0ken\r\n')).status).toBe(200);
    // Not started yet: not ready.
    expect((await ask('HEAD /readyz HTTP/1.1', 'Authorization: Bearer t0ken\r\n')).status).toBe(503);
    expect((await ask('POST /livez HTTP/1.1', 'Authorization: Bearer t0ken\r\n')).status).toBe(405);
    const elsewhere = await exchange(
      port,
      `GET /livez HTTP/1.1\r\nHost: attacker.example:${port}\r\nAuthorization: Bearer t0ken\r\nConnection: close\r\n\r\n`,
    );
    expect(elsewhere.status).toBe(421);
  });

  it('refuses a health option out of bounds, naming it', async () => {
    await expect(serveDashboard({ sources: new DispatchMetrics(), health: { stallMs: -1 } })).rejects.toThrow(
      /HealthCheck: expected `stallMs` to be an integer .* got -1/,
    );
  });
});
