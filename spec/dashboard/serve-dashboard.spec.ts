import { request } from 'node:http';
import { networkInterfaces } from 'node:os';
import { DispatchMetrics, DispatchRuntime, dispatchComponent, KeyedExecutor } from 'keyed-dispatch';
import { type Dashboard, serveDashboard } from 'keyed-dispatch/dashboard';
import { NEVER, VirtualAction, VirtualTimeScheduler } from 'rxjs';
import type { DispatcherFrame, Hello } from '../../src/dashboard/frame';
import { sleep } from '../support/waits';
import { EventStream } from './event-stream';
import { faultyTransport } from './faulty-transport';
import { gated, times } from './gated';
import { exchange } from './raw-http';

const open: Dashboard[] = [];
const streams: EventStream[] = [];
async function serve(options: Parameters<typeof serveDashboard>[0]): Promise<Dashboard> {
  const dashboard = await serveDashboard(options);
  open.push(dashboard);
  return dashboard;
}
async function events(url: string): Promise<EventStream> {
  const stream = await EventStream.open(url);
  streams.push(stream);
  return stream;
}
afterEach(async () => {
  for (const stream of streams.splice(0)) stream.close();
  await Promise.all(open.splice(0).map((d) => d.close()));
});

const at = (dashboard: Dashboard, path: string) => new URL(path, dashboard.url).toString();
const portOf = (dashboard: Dashboard) => Number(new URL(dashboard.url).port);
/** The status of `GET path` sent as it is, with `host` as the Host header (none when null). */
async function statusOf(port: number, path: string, host: string | null, address?: string): Promise<number> {
  const hostLine = host === null ? '' : `Host: ${host}\r\n`;
  const answer = await exchange(port, `GET ${path} HTTP/1.1\r\n${hostLine}Connection: close\r\n\r\n`, {
    address,
  });
  return answer.status;
}
/** A non-loopback address of this machine, if it has one. */
const externalAddress = Object.values(networkInterfaces())
  .flat()
  .find((i) => i !== undefined && !i.internal && i.family === 'IPv4')?.address;

/** A raw request, so the spec chooses the method and the Host header. */
function raw(url: string, method: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('serveDashboard', () => {
  it('serves one self-contained page on 127.0.0.1 by default, its script allowed by a nonce', async () => {
    const dashboard = await serve({ sources: new DispatchMetrics() });
    expect(dashboard.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const response = await fetch(dashboard.url);
    const page = await response.text();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = response.headers.get('content-security-policy') ?? '';
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(csp).toContain("default-src 'none'");
    expect(page).toContain(`<script nonce="${nonce}">`);
    // Nothing is loaded from anywhere else: no script or style sheet by URL.
    expect(page).not.toMatch(/<script[^>]*\ssrc=|<link\b/);
    expect(page).toContain('EventSource');
  });

  it('is read-only: every method but GET and HEAD is refused', async () => {
    const dashboard = await serve({ sources: new DispatchMetrics() });
    for (const [method, path] of [
      ['POST', '/'],
      ['PUT', '/events'],
      ['DELETE', '/metrics'],
      ['PATCH', '/'],
    ]) {
      expect(await raw(at(dashboard, path), method)).toBe(405);
    }
    expect(await raw(at(dashboard, '/metrics'), 'HEAD')).toBe(200);
    expect((await fetch(at(dashboard, '/nothing-here'))).status).toBe(404);
  });

  it('with a token, refuses requests without it and takes it as a bearer header or in the URL', async () => {
    const dashboard = await serve({ sources: new DispatchMetrics(), token: 's3cret/+' });
    expect(dashboard.url).toMatch(/\/\?token=s3cret%2F%2B$/);
    const bare = dashboard.url.replace(/\?.*$/, '');
    const refused = await fetch(bare);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await fetch(at(dashboard, '/metrics'))).status).toBe(401);
    expect((await fetch(at(dashboard, '/metrics?token=wrong'))).status).toBe(401);
    expect((await fetch(dashboard.url)).status).toBe(200);
    const scraped = await fetch(at(dashboard, '/metrics'), { headers: { Authorization: 'Bearer s3cret/+' } });
    expect(scraped.status).toBe(200);
    expect(await raw(`${bare}events`, 'GET')).toBe(401);
  });

  it('bound to the loopback, answers only requests addressed to a loopback name', async () => {
    const dashboard = await serve({ sources: new DispatchMetrics() });
    const port = new URL(dashboard.url).port;
    expect(await raw(dashboard.url, 'GET', { Host: `attacker.example:${port}` })).toBe(421);
    expect(await raw(dashboard.url, 'GET', { Host: `localhost:${port}` })).toBe(200);
    expect(await raw(dashboard.url, 'GET', { Host: `127.0.0.1:${port}` })).toBe(200);
  });

  it('answers 404 to paths a URL parser would take for a host (//, ///, //%, /\\), 401 without the token, and goes on serving', async () => {
    const open = await serve({ sources: new DispatchMetrics() });
    const guarded = await serve({ sources: new DispatchMetrics(), token: 't' });
    for (const path of ['//', '///', '//%', '/\\', '//evil.example/metrics']) {
      expect(await statusOf(portOf(open), path, '127.0.0.1')).toBe(404);
      expect(await statusOf(portOf(guarded), path, '127.0.0.1')).toBe(401);
    }
    expect((await fetch(open.url)).status).toBe(200);
    expect((await fetch(guarded.url)).status).toBe(200);
  });

  it('bound to a loopback address however `host` spells it, answers only requests addressed to a loopback name', async () => {
    for (const host of ['::ffff:127.0.0.1', '127.1', 'localhost', '127.0.0.1']) {
      const dashboard = await serve({ sources: new DispatchMetrics(), host });
      const port = portOf(dashboard);
      // `localhost` may be bound on ::1 only: the spec reaches it by name, as the server bound it.
      const reach = host === 'localhost' ? 'localhost' : undefined;
      expect(await statusOf(port, '/', `attacker.example:${port}`, reach)).toBe(421);
      expect(await statusOf(port, '/', '192.0.2.1', reach)).toBe(421);
      expect(await statusOf(port, '/', null, reach)).toBe(400); // HTTP/1.1 needs a Host
      for (const name of [
        `localhost:${port}`,
        'LOCALHOST',
        `127.0.0.1:${port}`,
        '127.3.2.1',
        `[::1]:${port}`,
        '[::ffff:7f00:1]',
      ]) {
        expect(await statusOf(port, '/', name, reach)).toBe(200);
      }
    }
  });

  it('bound to all interfaces, answers requests addressed to an IP literal, localhost or a name in `allowedHosts`, and no other name', async () => {
    const unlisted = await serve({ sources: new DispatchMetrics(), host: '0.0.0.0' });
    expect(await statusOf(portOf(unlisted), '/', 'dash.example')).toBe(421);
    const dashboard = await serve({
      sources: new DispatchMetrics(),
      host: '0.0.0.0',
      allowedHosts: ['dash.example'],
    });
    const port = portOf(dashboard);
    expect(dashboard.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(await statusOf(port, '/', `attacker.example:${port}`)).toBe(421);
    expect(await statusOf(port, '/', 'dash.example.attacker.example')).toBe(421);
    expect(await statusOf(port, '/', 'localhost.')).toBe(421);
    for (const name of [
      `dash.example:${port}`,
      'DASH.example',
      `localhost:${port}`,
      '192.0.2.1:80',
      '[fd00::2]',
      '127.0.0.1',
    ]) {
      expect(await statusOf(port, '/', name)).toBe(200);
    }
  });

  (externalAddress === undefined ? it.skip : it)(
    'bound to one non-loopback address, answers requests addressed to an IP literal, localhost or a name in `allowedHosts`',
    async () => {
      const address = externalAddress as string;
      const dashboard = await serve({
        sources: new DispatchMetrics(),
        host: address,
        allowedHosts: ['dash.example'],
      });
      const port = portOf(dashboard);
      expect(dashboard.url).toBe(`http://${address}:${port}/`);
      expect(await statusOf(port, '/', `attacker.example:${port}`, address)).toBe(421);
      for (const name of [`${address}:${port}`, 'dash.example', 'localhost']) {
        expect(await statusOf(port, '/', name, address)).toBe(200);
      }
    },
  );

  it('answers 503 to an event stream over `maxEventStreams` (default 16), naming the option to raise', async () => {
    const defaulted = await serve({ sources: new DispatchMetrics() });
    for (let i = 0; i < 16; i++) await events(at(defaulted, '/events'));
    expect((await fetch(at(defaulted, '/events'))).status).toBe(503);

    const capped = await serve({ sources: new DispatchMetrics(), maxEventStreams: 2 });
    const first = await events(at(capped, '/events'));
    await events(at(capped, '/events'));
    const refused = await fetch(at(capped, '/events'));
    expect(refused.status).toBe(503);
    expect(await refused.text()).toMatch(/maxEventStreams/);
    // The page and the metrics are still served.
    expect((await fetch(capped.url)).status).toBe(200);
    expect((await fetch(at(capped, '/metrics'))).status).toBe(200);
    first.close();
    // Once the server has seen that page leave, another may connect.
    const deadline = Date.now() + 2000;
    let replaced: EventStream | null = null;
    while (replaced === null && Date.now() < deadline) {
      await sleep(20);
      replaced = await events(at(capped, '/events')).catch(() => null);
    }
    expect(replaced).not.toBeNull();
  });

  it('sends a page that connects a bounded first event: the most recent chart points, not the whole history', async () => {
    const clock = new VirtualTimeScheduler(VirtualAction, 0);
    const sources = Object.fromEntries(
      Array.from({ length: 20 }, (_, i) => [`dispatcher-${i}`, new DispatchMetrics({}, clock)]),
    );
    const dashboard = await serve({ sources, periodMs: 100 });
    const watching = await events(at(dashboard, '/events'));
    await watching.next('hello');
    // 400 periods (more points than a first event carries), a second at a time, so the page keeps up.
    for (let second = 1; second <= 40; second++) {
      clock.maxFrames = second * 1000;
      clock.flush();
      await new Promise((resolve) => setImmediate(resolve));
    }
    const later = await events(at(dashboard, '/events'));
    const text = await later.nextText('hello');
    const hello = JSON.parse(text) as Hello;
    expect(hello.historyLength).toBe(3000);
    expect(hello.frames).toHaveLength(20);
    const points = Object.values(hello.history).reduce((n, h) => n + h.length, 0);
    expect(points).toBeLessThanOrEqual(3600);
    // Each dispatcher's points are its latest: the last one is its latest frame.
    for (const frame of hello.frames) expect(hello.history[frame.name].at(-1)?.[0]).toBe(frame.time);
    // 20 dispatchers at 100 ms, 400 points each: 8,000 points, ~260 KB, would have been sent; at five
    // minutes of history (3,000 points each), ~2 MB.
    expect(text.length).toBeLessThan(160_000);
  });

  it("streams each dispatcher's transport faults by operation", async () => {
    const metrics = new DispatchMetrics();
    const transport = faultyTransport(metrics);
    transport.fail('fetch', 2);
    transport.fail('commit');
    const dashboard = await serve({ sources: { orders: metrics }, periodMs: 100 });
    const frame = await (await events(at(dashboard, '/events'))).next<DispatcherFrame>('frame');
    expect(frame.transportFaults).toEqual({ fetch: 2, commit: 1, heartbeat: 0, connection: 0 });
    transport.stop();
  });

  it('shows a key that has no text form (no prototype, a throwing toString) by its tag', async () => {
    const metrics = new DispatchMetrics();
    const bare = Object.create(null);
    const throwing = {
      toString() {
        throw new Error('no text');
      },
    };
    const run = gated(metrics, [bare, bare, throwing]);
    const dashboard = await serve({ sources: { orders: metrics }, periodMs: 100 });
    const stream = await events(at(dashboard, '/events'));
    const frame = await stream.next<DispatcherFrame>('frame');
    expect(frame.hotKeys).toEqual([
      { key: '[object Object]', backlog: 2, parked: 0 },
      { key: '[object Object]', backlog: 1, parked: 0 },
    ]);
    run.stop();
  });

  it('names the option, the value and its type when an option is wrong', async () => {
    const metrics = new DispatchMetrics();
    await expect(serveDashboard(null as never)).rejects.toThrow(
      'serveDashboard: expected an options object, got null',
    );
    await expect(serveDashboard({ sources: metrics, port: 70_000 })).rejects.toThrow(
      'serveDashboard: expected `port` to be an integer from 0 to 65535, got 70000 (number)',
    );
    await expect(serveDashboard({ sources: metrics, host: '' })).rejects.toThrow(
      "serveDashboard: expected `host` to be a non-empty string, got '' (string)",
    );
    await expect(serveDashboard({ sources: metrics, token: 42 as never })).rejects.toThrow(
      'serveDashboard: expected `token` to be a non-empty string, got 42 (number)',
    );
    await expect(serveDashboard({ sources: metrics, allowedHosts: 'dash.example' as never })).rejects.toThrow(
      "serveDashboard: expected `allowedHosts` to be an array of host names, got 'dash.example' (string)",
    );
    await expect(serveDashboard({ sources: metrics, allowedHosts: ['dash.example:8080'] })).rejects.toThrow(
      "serveDashboard: expected `allowedHosts[0]` to be a host name (letters, digits, '-', '_' and '.', no port), got 'dash.example:8080' (string)",
    );
    await expect(
      serveDashboard({ sources: metrics, allowedHosts: ['ok.example', 7 as never] }),
    ).rejects.toThrow(
      "serveDashboard: expected `allowedHosts[1]` to be a host name (letters, digits, '-', '_' and '.', no port), got 7 (number)",
    );
    await expect(serveDashboard({ sources: metrics, maxEventStreams: 0 })).rejects.toThrow(
      'serveDashboard: expected `maxEventStreams` to be an integer from 1 to 10000, got 0 (number)',
    );
    await expect(serveDashboard({ sources: metrics, periodMs: 10 })).rejects.toThrow(
      'serveDashboard: expected `periodMs` to be an integer from 100 to 60000, got 10 (number)',
    );
    await expect(serveDashboard({ sources: 'orders' as never })).rejects.toThrow(
      "serveDashboard: expected `sources` to be a DispatchMetrics, a DispatchRuntime or an object naming them, got 'orders' (string)",
    );
    await expect(serveDashboard({ sources: { orders: {} as never } })).rejects.toThrow(
      'serveDashboard: expected `sources.orders` to be a DispatchMetrics or a DispatchRuntime, got an object (object)',
    );
    await expect(serveDashboard({ sources: {} })).rejects.toThrow(
      'serveDashboard: expected `sources` to name at least one DispatchMetrics',
    );
  });

  it("shows each runtime component that has a DispatchMetrics, under the component's name", async () => {
    const executor = new KeyedExecutor({ lanes: 1 });
    const component = (name: string, stats?: DispatchMetrics) =>
      dispatchComponent({
        name,
        source: NEVER,
        dispatch: { key: (m: string) => m, handle: () => [], stats },
      });
    const runtime = new DispatchRuntime({
      executor,
      components: [
        component('commands', new DispatchMetrics()),
        component('audit'),
        component('saga', new DispatchMetrics()),
      ],
    });
    const alone = await serve({ sources: runtime, periodMs: 100 });
    expect((await (await events(at(alone, '/events'))).next<Hello>('hello')).names).toEqual([
      'commands',
      'saga',
    ]);
    const named = await serve({
      sources: { billing: runtime, orders: new DispatchMetrics() },
      periodMs: 100,
    });
    expect((await (await events(at(named, '/events'))).next<Hello>('hello')).names).toEqual([
      'billing/commands',
      'billing/saga',
      'orders',
    ]);
    await runtime.forceStop();
  });

  it('reads the dispatchers only while a page is connected', async () => {
    const metrics = new DispatchMetrics();
    const reads = jest.spyOn(metrics, 'snapshot');
    const dashboard = await serve({ sources: metrics, periodMs: 100 });
    await sleep(350);
    expect(reads).not.toHaveBeenCalled();
    const stream = await events(at(dashboard, '/events'));
    await stream.next('frame');
    await stream.next('frame');
    expect(reads).toHaveBeenCalled();
    stream.close();
    await sleep(100); // the server sees the page leave
    const afterLeaving = reads.mock.calls.length;
    await sleep(350);
    expect(reads.mock.calls.length).toBe(afterLeaving);
  });

  it('streams each dispatcher every period: window, stall threshold, hot keys, lanes and the key stalling the window', async () => {
    const orders = new DispatchMetrics({ hotKeys: 3 });
    const stuck = new DispatchMetrics();
    const flowing = gated(orders, ['a', 'a', 'b', 'c', 'c', 'c']);
    const stalled = gated(stuck, times(40, 'hot'), 16);
    const dashboard = await serve({ sources: { orders, stuck }, periodMs: 100 });
    const stream = await events(at(dashboard, '/events'));
    const hello = await stream.next<Hello>('hello');
    expect(hello).toMatchObject({ names: ['orders', 'stuck'], periodMs: 100, historyLength: 3000 });

    const frames = new Map<string, DispatcherFrame>();
    while (frames.size < 2) {
      const frame = await stream.next<DispatcherFrame>('frame');
      frames.set(frame.name, frame);
    }
    expect(frames.get('orders')).toMatchObject({
      inFlight: 6,
      maxInFlight: 256,
      stallThreshold: 240,
      liveMailboxes: 3,
      admitted: 6,
      hotKeys: [
        { key: 'c', backlog: 3 },
        { key: 'a', backlog: 2 },
        { key: 'b', backlog: 1 },
      ],
      heldBy: null,
    });
    expect(frames.get('orders')?.lanes.length).toBeGreaterThan(0);
    // 16 in flight, all of one key: above 16 − 16/16 = 15, intake has stopped.
    expect(frames.get('stuck')).toMatchObject({
      inFlight: 16,
      maxInFlight: 16,
      stallThreshold: 15,
      heldBy: { key: 'hot', backlog: 16, parked: 0 },
    });

    // A page that connects later gets the charts' recent points and the latest frames at once.
    const later = await events(at(dashboard, '/events'));
    const replay = await later.next<Hello>('hello');
    expect(replay.history.orders.length).toBeGreaterThan(0);
    expect(replay.frames.map((f) => f.name).sort()).toEqual(['orders', 'stuck']);
    flowing.stop();
    stalled.stop();
  });

  it('close() ends the event streams and frees the port', async () => {
    const dashboard = await serveDashboard({ sources: new DispatchMetrics(), periodMs: 100 });
    const stream = await events(at(dashboard, '/events'));
    await stream.next('hello');
    await dashboard.close();
    expect(await stream.closedByServer()).toBe(true);
    await expect(fetch(dashboard.url)).rejects.toThrow();
  });
});
