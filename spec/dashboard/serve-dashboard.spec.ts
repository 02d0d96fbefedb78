import { request } from 'node:http';
import { DispatchMetrics, DispatchRuntime, dispatchComponent, KeyedExecutor } from 'keyed-dispatch';
import { type Dashboard, serveDashboard } from 'keyed-dispatch/dashboard';
import { NEVER } from 'rxjs';
import type { DispatcherFrame, Hello } from '../../src/dashboard/frame';
import { EventStream } from './event-stream';
import { gated, times } from './gated';

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
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
    const executor = new KeyedExecutor({ workers: 1 });
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
