import {
  type AnyRuntimeComponent,
  DispatchRuntime,
  DispatchStats,
  dispatchComponent,
  HealthCheck,
  KeyedExecutor,
  keyedDispatch,
  LocalBus,
  openReceiver,
  Receiver,
  type ReceiverSession,
} from 'keyed-dispatch';
import { throwError } from 'rxjs';

interface Msg {
  key: string;
}

const executors: KeyedExecutor[] = [];
afterAll(() => Promise.all(executors.map((e) => e.close())));

/** A runtime of one component `orders` on a bus, with stats, plus `others` (components with no stats). */
function ordersRuntime(others: AnyRuntimeComponent[] = []) {
  const bus = new LocalBus<Msg>();
  const stats = new DispatchStats();
  const executor = new KeyedExecutor({ lanes: 1 });
  executors.push(executor);
  const runtime = new DispatchRuntime({
    executor,
    components: [
      dispatchComponent({
        name: 'orders',
        source: bus.receive(),
        dispatch: { key: (m: Msg) => m.key, handle: () => [], stats },
      }),
      ...others,
    ],
  });
  return { bus, stats, runtime };
}

describe('HealthCheck of a runtime', () => {
  it('is not ready before the runtime starts, live and ready while it runs, and not ready but live once it stopped', async () => {
    const { runtime } = ordersRuntime();
    const health = new HealthCheck(runtime);
    expect(health.check()).toEqual({
      live: true,
      ready: false,
      reasons: [
        { source: 'runtime', fails: 'ready', problem: 'not-started', detail: 'it has not started' },
        { source: 'orders', fails: 'ready', problem: 'not-started', detail: 'it has not started' },
      ],
      dispatchers: [
        {
          name: 'orders',
          live: true,
          ready: false,
          reasons: [
            { source: 'orders', fails: 'ready', problem: 'not-started', detail: 'it has not started' },
          ],
        },
      ],
    });
    runtime.start();
    expect(health.check()).toEqual({
      live: true,
      ready: true,
      reasons: [],
      dispatchers: [{ name: 'orders', live: true, ready: true, reasons: [] }],
    });
    await runtime.stopGracefully({ timeoutMs: 1000 });
    const stopped = health.check();
    expect(stopped).toMatchObject({ live: true, ready: false });
    expect(stopped.reasons.map((r) => [r.source, r.problem])).toEqual([
      ['runtime', 'stopped'],
      ['orders', 'ended'],
    ]);
  });

  it('is not ready while the runtime is stopping', async () => {
    const { runtime, bus } = ordersRuntime();
    const health = new HealthCheck({ shop: runtime });
    runtime.start();
    const stopping = runtime.stopGracefully({ timeoutMs: 1000, quietPeriodMs: 50 });
    // Within the quiet period: intake is still open, the runtime is on its way out.
    expect(health.check().reasons).toEqual([
      { source: 'shop', fails: 'ready', problem: 'stopping', detail: 'it is stopping' },
    ]);
    await stopping;
    bus.close();
  });

  it('is not live once a component has errored, naming the component and its error, while the others run', () => {
    const failing = new DispatchStats();
    const { runtime } = ordersRuntime([
      dispatchComponent({
        name: 'billing',
        source: throwError(() => new Error('the billing feed broke')),
        dispatch: { key: (m: Msg) => m.key, handle: () => [], stats: failing },
        output: { error: () => undefined },
      }),
    ]);
    const health = new HealthCheck(runtime);
    runtime.start();
    const report = health.check();
    expect(report).toMatchObject({ live: false, ready: false });
    expect(report.reasons).toEqual([
      {
        source: 'billing',
        fails: 'live',
        problem: 'errored',
        detail: 'its output errored: Error: the billing feed broke',
      },
    ]);
    expect(report.dispatchers.map((d) => [d.name, d.live, d.ready])).toEqual([
      ['orders', true, true],
      ['billing', false, false],
    ]);
    return runtime.forceStop();
  });
});

describe('HealthCheck of a dispatcher', () => {
  it('is ready while its dispatcher runs, and not ready once its subscriber left', () => {
    const stats = new DispatchStats();
    const health = new HealthCheck({ orders: stats });
    const bus = new LocalBus<Msg>();
    const subscription = bus
      .receive()
      .pipe(keyedDispatch({ key: (m: Msg) => m.key, handle: () => [], stats }))
      .subscribe();
    expect(health.check()).toMatchObject({ live: true, ready: true });
    subscription.unsubscribe();
    expect(health.check().reasons).toEqual([
      { source: 'orders', fails: 'ready', problem: 'ended', detail: 'it was unsubscribed (stopped)' },
    ]);
  });

  it('is not ready when its receiver throws on being asked why, naming what it threw', () => {
    const stats = new DispatchStats();
    const health = new HealthCheck(stats);
    const receiver = new (class extends Receiver<Msg> {
      [openReceiver](): ReceiverSession<Msg> {
        return {
          request() {},
          settle() {},
          cancel() {},
          notReadyBecause() {
            throw new Error('no idea');
          },
        };
      }
    })();
    const subscription = receiver
      .pipe(keyedDispatch({ key: (m: Msg) => m.key, handle: () => [], stats }))
      .subscribe();
    expect(health.check().reasons).toEqual([
      {
        source: 'dispatcher',
        fails: 'ready',
        problem: 'receiver-not-ready',
        detail: "its receiver's notReadyBecause threw: Error: no idea",
      },
    ]);
    subscription.unsubscribe();
  });

  it('refuses sources that are neither stats nor runtimes, and options out of bounds, naming them', () => {
    expect(() => new HealthCheck({ orders: {} as DispatchStats })).toThrow(
      'HealthCheck: expected `sources.orders` to be a DispatchStats or a DispatchRuntime, got an object',
    );
    expect(() => new HealthCheck(new DispatchStats(), { stallMs: 0 })).toThrow(/`stallMs`.*got 0/);
    expect(() => new HealthCheck(new DispatchStats(), { unreachableMs: '5' as never })).toThrow(
      /`unreachableMs`.*got '5' \(string\)/,
    );
  });
});
