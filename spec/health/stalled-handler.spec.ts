import { DispatchStats, HealthCheck, keyedDispatch, LocalBus, retryPolicy } from 'keyed-dispatch';
import type { Subscription } from 'rxjs';
import { laneKinds, type Msg, type Ran } from '../lanes/lane-kinds';
import { sleep } from '../support/waits';

/** Until `condition` holds, checking every 10 ms; false after `ms`. */
async function until(ms: number, condition: () => boolean): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await sleep(10);
  }
  return true;
}

describe.each(laneKinds)('HealthCheck on %s', (_name, kind) => {
  let lanes: ReturnType<typeof kind.executor>;
  const running: Subscription[] = [];
  beforeAll(() => {
    lanes = kind.executor(2);
  });
  afterEach(() => {
    for (const subscription of running.splice(0)) subscription.unsubscribe();
  });
  afterAll(() => lanes.close());

  /** A dispatcher of `messages` on the lanes, with `stats`, handling them with the fixture `handler`. */
  function dispatch(messages: Msg[], handler: string, stats: DispatchStats, retries = false): Ran[] {
    const handled: Ran[] = [];
    // A bus, not a list: its receiver stays open (a list's ends, and its dispatcher is not ready then).
    const bus = new LocalBus<Msg>();
    for (const message of messages) void bus.send(message);
    running.push(
      bus
        .receive()
        .pipe(
          keyedDispatch<Msg, string, Ran>({
            executor: lanes.executor,
            key: (m) => m.key,
            handle: kind.handler(handler),
            stats,
            ...(retries && {
              failurePolicy: retryPolicy({
                maxAttempts: Number.POSITIVE_INFINITY,
                backoff: { initialMs: 10, factor: 1, maxMs: 10, jitter: 0 },
              }),
            }),
          }),
        )
        .subscribe({ next: (ran) => handled.push(ran), error: () => undefined }),
    );
    return handled;
  }

  it('says a dispatcher whose handler has hung for longer than stallMs is not live, while its other keys flow', async () => {
    const stats = new DispatchStats();
    const health = new HealthCheck(stats, { stallMs: 200 });
    const handled = dispatch(
      [{ key: 'stuck', n: 1, stuck: true }, ...[1, 2, 3, 4].map((n) => ({ key: `k${n}`, n }))],
      'stuckOrEcho',
      stats,
    );
    expect(await until(10_000, () => handled.length === 4)).toBe(true);
    // The first check sees the stuck message for the first time: no stall yet.
    expect(health.check()).toMatchObject({ live: true, ready: true, reasons: [] });
    await sleep(400);
    const report = health.check();
    expect(report).toMatchObject({
      live: false,
      ready: false,
      reasons: [{ source: 'dispatcher', fails: 'live', problem: 'stalled' }],
    });
    expect(report.reasons[0]?.detail).toMatch(
      /a message has been unfinished for \d+ ms .*stallMs \(200 ms\)/,
    );
    const { dispatchers, ...overall } = report;
    expect(dispatchers).toEqual([{ name: 'dispatcher', ...overall }]);
  });

  it('reads a message its failure policy keeps retrying as progress, never as a stall', async () => {
    const stats = new DispatchStats();
    const health = new HealthCheck(stats, { stallMs: 300 });
    const handled = dispatch(
      [
        { key: 'poison', n: 1, poison: true },
        { key: 'k', n: 1 },
      ],
      'poisonOrEcho',
      stats,
      true,
    );
    expect(await until(10_000, () => handled.length === 1 && stats.snapshot().failedAttempts > 0)).toBe(true);
    expect(health.check().live).toBe(true);
    const attempts = stats.snapshot().failedAttempts;
    await sleep(600);
    // Retried all along (every 10 ms), so still unfinished and live.
    expect(stats.snapshot().failedAttempts).toBeGreaterThan(attempts);
    expect(stats.inFlight).toBe(1);
    expect(health.check()).toMatchObject({ live: true, ready: true, reasons: [] });
  });
});
