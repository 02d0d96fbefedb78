import {
  DispatchRuntime,
  DispatchRuntimeStoppedError,
  dispatchComponent,
  fromIterable,
  KeyedExecutor,
  LocalBus,
  retryPolicy,
} from 'keyed-dispatch';
import { NEVER, type Observable, Subject, throwError, timer } from 'rxjs';
import { map } from 'rxjs/operators';
import { ManualReceiver } from './manual-receiver';

interface Msg {
  key: string;
  id: string;
}
const msg = (key: string, id: string): Msg => ({ key, id });

/** A handler controlled by the spec: each message's handler completes when the spec says so. */
class Handlers {
  readonly started: string[] = [];
  private readonly running = new Map<string, Subject<string>>();
  /** Messages whose handler never completes. */
  readonly hanging = new Set<string>();

  handle = (m: Msg): Observable<string> => {
    this.started.push(m.id);
    if (this.hanging.has(m.id)) return NEVER;
    const done = new Subject<string>();
    this.running.set(m.id, done);
    return done;
  };

  finish(id: string): void {
    const done = this.running.get(id);
    if (done === undefined) throw new Error(`${id} is not running`);
    this.running.delete(id);
    done.next(id);
    done.complete();
  }
}

function runtimeOf(
  receiver: ManualReceiver<Msg>,
  handlers: Handlers,
  executor = new KeyedExecutor({ lanes: 2 }),
) {
  const runtime = new DispatchRuntime({
    executor,
    components: [
      dispatchComponent({
        name: 'orders',
        source: receiver,
        dispatch: { key: (m: Msg) => m.key, handle: handlers.handle, maxInFlight: 16 },
      }),
    ],
  });
  return { runtime, executor };
}

const ids = (messages: readonly unknown[]) => (messages as Msg[]).map((m) => m.id).sort();
const settledIds = (receiver: ManualReceiver<Msg>) =>
  receiver.settled.map((s) => `${s.message.id}:${s.outcome}`);

afterEach(() => {
  jest.useRealTimers();
});

describe('DispatchRuntime lifecycle', () => {
  it('closes intake, lets running and queued messages finish, settles them, then closes the executor', async () => {
    const receiver = new ManualReceiver<Msg>();
    const handlers = new Handlers();
    const { runtime, executor } = runtimeOf(receiver, handlers);
    runtime.start();
    receiver.push(msg('a', 'a1'), msg('a', 'a2'), msg('b', 'b1'));
    expect(handlers.started).toEqual(['a1', 'b1']);

    const stopped = runtime.stopGracefully({ timeoutMs: 60_000 });
    expect(runtime.state).toBe('stopping');
    expect(receiver.cancelled).toBe(true);
    receiver.push(msg('c', 'c1')); // after intake closed: never delivered
    handlers.finish('a1');
    handlers.finish('b1');
    expect(executor.closed).toBe(false);
    handlers.finish('a2');
    const report = await stopped;

    expect(report.outcome).toBe('drained');
    expect(report.components[0]).toMatchObject({ name: 'orders', state: 'drained', drained: 3, failed: 0 });
    expect(report.components[0].leftForRedelivery).toEqual([]);
    expect(settledIds(receiver)).toEqual(['a1:done', 'b1:done', 'a2:done']);
    expect(receiver.undelivered).toBe(1);
    expect(executor.closed).toBe(true);
    expect(runtime.state).toBe('stopped');
  });

  it("with drain 'running', finishes running handlers and leaves queued messages unsettled for redelivery", async () => {
    const receiver = new ManualReceiver<Msg>();
    const handlers = new Handlers();
    const { runtime } = runtimeOf(receiver, handlers);
    runtime.start();
    receiver.push(msg('a', 'a1'), msg('a', 'a2'), msg('a', 'a3'));
    const stopped = runtime.stopGracefully({ drain: 'running' });
    handlers.finish('a1');
    const report = await stopped;
    expect(report.outcome).toBe('drained');
    expect(ids(report.components[0].leftForRedelivery)).toEqual(['a2', 'a3']);
    expect(settledIds(receiver)).toEqual(['a1:done']);
    expect(handlers.started).toEqual(['a1']);
  });

  it('cuts handlers still running at the deadline and leaves their messages unsettled', async () => {
    jest.useFakeTimers();
    const receiver = new ManualReceiver<Msg>();
    const handlers = new Handlers();
    handlers.hanging.add('a1');
    const { runtime, executor } = runtimeOf(receiver, handlers);
    runtime.start();
    receiver.push(msg('a', 'a1'), msg('a', 'a2'), msg('b', 'b1'));
    const stopped = runtime.stopGracefully({ timeoutMs: 5_000 });
    handlers.finish('b1');
    let settledAt = -1;
    void stopped.then(() => (settledAt = Date.now()));
    const startedAt = Date.now();
    await jest.advanceTimersByTimeAsync(4_999);
    expect(settledAt).toBe(-1);
    await jest.advanceTimersByTimeAsync(1);
    const report = await stopped;
    expect(settledAt - startedAt).toBe(5_000);
    expect(report.outcome).toBe('deadline');
    expect(report.components[0].state).toBe('cut');
    expect(ids(report.components[0].leftForRedelivery)).toEqual(['a1', 'a2']);
    expect(settledIds(receiver)).toEqual(['b1:done']);
    expect(executor.closed).toBe(true);
  });

  it('forceStop returns at once even when a handler hangs and the receiver never finishes closing', async () => {
    const receiver = new ManualReceiver<Msg>(() => new Promise<void>(() => undefined));
    const handlers = new Handlers();
    handlers.hanging.add('a1');
    const { runtime, executor } = runtimeOf(receiver, handlers);
    runtime.start();
    receiver.push(msg('a', 'a1'), msg('b', 'b1'));
    const report = await runtime.forceStop();
    expect(report.outcome).toBe('forced');
    expect(ids(report.components[0].leftForRedelivery)).toEqual(['a1', 'b1']);
    expect(receiver.settled).toEqual([]);
    expect(receiver.cancelled).toBe(true);
    expect(executor.closed).toBe(true);
  });

  it('forceStop takes over a graceful stop under way, which resolves with the forced report', async () => {
    const receiver = new ManualReceiver<Msg>();
    const handlers = new Handlers();
    handlers.hanging.add('a1');
    const { runtime } = runtimeOf(receiver, handlers);
    runtime.start();
    receiver.push(msg('a', 'a1'));
    const graceful = runtime.stopGracefully({ timeoutMs: 60_000 });
    const forced = runtime.forceStop();
    expect(forced).toBe(graceful);
    const report = await graceful;
    expect(report.outcome).toBe('forced');
    expect(ids(report.components[0].leftForRedelivery)).toEqual(['a1']);
  });

  it('waits for a receiver that closes asynchronously, within the deadline, before closing the executor', async () => {
    jest.useFakeTimers();
    let closed!: () => void;
    const receiver = new ManualReceiver<Msg>(() => new Promise<void>((resolve) => (closed = resolve)));
    const { runtime, executor } = runtimeOf(receiver, new Handlers());
    runtime.start();
    const stopped = runtime.stopGracefully({ timeoutMs: 1_000 });
    await jest.advanceTimersByTimeAsync(500);
    expect(executor.closed).toBe(false);
    closed();
    const report = await stopped;
    expect(report.outcome).toBe('drained');
    expect(executor.closed).toBe(true);
  });

  it('reports a receiver still closing at the deadline and closes the executor anyway', async () => {
    jest.useFakeTimers();
    const receiver = new ManualReceiver<Msg>(() => new Promise<void>(() => undefined));
    const { runtime, executor } = runtimeOf(receiver, new Handlers());
    runtime.start();
    const stopped = runtime.stopGracefully({ timeoutMs: 1_000 });
    await jest.advanceTimersByTimeAsync(1_000);
    const report = await stopped;
    expect(report.outcome).toBe('deadline');
    expect(report.components[0].sourceErrors).toEqual([
      new Error('the source had not finished closing by the stop deadline'),
    ]);
    expect(executor.closed).toBe(true);
  });

  it('with a deadline of 0, reports an idle runtime drained when its receiver closed at once', async () => {
    const bus = new LocalBus<Msg>();
    const runtime = new DispatchRuntime({
      executor: new KeyedExecutor({ lanes: 1 }),
      components: [
        dispatchComponent({
          name: 'idle',
          source: bus.receive(),
          dispatch: { key: (m: Msg) => m.key, handle: (m: Msg) => [m.id] },
        }),
        dispatchComponent({
          name: 'done',
          source: fromIterable<Msg>([]),
          dispatch: { key: (m: Msg) => m.key, handle: (m: Msg) => [m.id] },
        }),
      ],
    }).start();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const report = await runtime.stopGracefully({ timeoutMs: 0 });
    expect(report.outcome).toBe('drained');
    expect(report.components.map((c) => c.sourceErrors)).toEqual([[], []]);
  });

  it('with a deadline of 0, stops without waiting for any timer, cutting a handler still running', async () => {
    jest.useFakeTimers();
    const handlers = new Handlers();
    handlers.hanging.add('a1');
    const receiver = new ManualReceiver<Msg>();
    const { runtime } = runtimeOf(receiver, handlers);
    runtime.start();
    receiver.push(msg('a', 'a1'));
    const report = await runtime.stopGracefully({ timeoutMs: 0 });
    expect(report.outcome).toBe('deadline');
    expect(ids(report.components[0].leftForRedelivery)).toEqual(['a1']);
  });

  it('with a deadline of 0, reports a receiver that closes asynchronously as still closing', async () => {
    const receiver = new ManualReceiver<Msg>(() => new Promise<void>(() => undefined));
    const { runtime } = runtimeOf(receiver, new Handlers());
    runtime.start();
    const report = await runtime.stopGracefully({ timeoutMs: 0 });
    expect(report.outcome).toBe('deadline');
    expect(report.components[0].sourceErrors).toEqual([
      new Error('the source had not finished closing by the stop deadline'),
    ]);
  });

  it('completes the stop when a receiver throws on cancellation, reporting the error, and drains the others', async () => {
    const broken = new ManualReceiver<Msg>(() => {
      throw new Error('broker connection lost');
    });
    const healthy = new ManualReceiver<Msg>();
    const handlers = new Handlers();
    const executor = new KeyedExecutor({ lanes: 1 });
    const runtime = new DispatchRuntime({
      executor,
      components: [
        dispatchComponent({
          name: 'broken',
          source: broken,
          dispatch: { key: (m: Msg) => m.key, handle: handlers.handle },
        }),
        dispatchComponent({
          name: 'healthy',
          source: healthy,
          dispatch: { key: (m: Msg) => m.key, handle: handlers.handle },
        }),
      ],
    }).start();
    broken.push(msg('a', 'a1'));
    healthy.push(msg('b', 'b1'));
    const stopped = runtime.stopGracefully();
    handlers.finish('a1');
    handlers.finish('b1');
    const report = await stopped;
    expect(report.outcome).toBe('drained');
    expect(report.components.map((c) => [c.name, c.state, c.drained])).toEqual([
      ['broken', 'drained', 1],
      ['healthy', 'drained', 1],
    ]);
    expect(report.components[0].sourceErrors).toEqual([new Error('broker connection lost')]);
    expect(settledIds(broken)).toEqual(['a1:done']);
    expect(executor.closed).toBe(true);
  });

  it('keeps messages a receiver delivers after intake closed out of the dispatcher and reports them', async () => {
    const receiver = new ManualReceiver<Msg>();
    const handlers = new Handlers();
    const { runtime } = runtimeOf(receiver, handlers);
    runtime.start();
    receiver.push(msg('a', 'a1'));
    const stopped = runtime.stopGracefully();
    receiver.deliverNow(msg('late', 'l1'));
    handlers.finish('a1');
    const report = await stopped;
    expect(handlers.started).toEqual(['a1']);
    expect(ids(report.components[0].leftForRedelivery)).toEqual(['l1']);
  });

  it('stopped before start, closes the executor and reports every component as not started', async () => {
    const receiver = new ManualReceiver<Msg>();
    const { runtime, executor } = runtimeOf(receiver, new Handlers());
    const report = await runtime.stopGracefully();
    expect(report).toEqual({
      outcome: 'drained',
      components: [
        {
          name: 'orders',
          state: 'not-started',
          drained: 0,
          failed: 0,
          leftForRedelivery: [],
          sourceErrors: [],
        },
      ],
    });
    expect(receiver.openedAt).toBe(-1);
    expect(executor.closed).toBe(true);
  });

  it('stopped twice, returns the same stop to both callers', async () => {
    const receiver = new ManualReceiver<Msg>();
    const { runtime } = runtimeOf(receiver, new Handlers());
    runtime.start();
    const first = runtime.stopGracefully();
    const second = runtime.stopGracefully({ timeoutMs: 1 });
    expect(second).toBe(first);
    expect(await runtime.stopGracefully()).toBe(await first);
    expect(await runtime.forceStop()).toBe(await first);
  });

  it('refuses to start again after a stop', async () => {
    const { runtime } = runtimeOf(new ManualReceiver<Msg>(), new Handlers());
    runtime.start();
    await runtime.stopGracefully();
    expect(() => runtime.start()).toThrow(DispatchRuntimeStoppedError);
    const unstarted = runtimeOf(new ManualReceiver<Msg>(), new Handlers()).runtime;
    await unstarted.forceStop();
    expect(() => unstarted.start()).toThrow(DispatchRuntimeStoppedError);
  });

  it('started twice, subscribes once', async () => {
    const receiver = new ManualReceiver<Msg>();
    const { runtime } = runtimeOf(receiver, new Handlers());
    runtime.start();
    runtime.start();
    expect(receiver.requests).toEqual([16]);
    await runtime.stopGracefully();
  });

  it('keeps intake open through the quiet period while a cyclic pipeline is still producing', async () => {
    jest.useFakeTimers();
    const run = async (quietPeriod: number) => {
      const receiver = new ManualReceiver<Msg>();
      const handled: string[] = [];
      const runtime = new DispatchRuntime({
        executor: new KeyedExecutor({ lanes: 1 }),
        components: [
          dispatchComponent({
            name: 'saga',
            source: receiver,
            dispatch: {
              key: (m: Msg) => m.key,
              // Each step sends the next one 100 ms later, five steps in all.
              handle: (m: Msg) => {
                handled.push(m.id);
                const step = Number(m.id);
                if (step < 5)
                  void timer(100).subscribe(() => receiver.push(msg(`k${step + 1}`, String(step + 1))));
                return [];
              },
            },
          }),
        ],
      }).start();
      receiver.push(msg('k1', '1'));
      const stopped = runtime.stopGracefully({ timeoutMs: 10_000, quietPeriodMs: quietPeriod });
      await jest.advanceTimersByTimeAsync(10_000);
      const report = await stopped;
      return { handled, report };
    };
    expect((await run(0)).handled).toEqual(['1']);
    const quiet = await run(150);
    expect(quiet.handled).toEqual(['1', '2', '3', '4', '5']);
    expect(quiet.report.outcome).toBe('drained');
  });

  it('reports a component whose handler failed as errored while the others keep running', async () => {
    const failing = new ManualReceiver<Msg>();
    const healthy = new ManualReceiver<Msg>();
    const errors: unknown[] = [];
    const handlers = new Handlers();
    const runtime = new DispatchRuntime({
      executor: new KeyedExecutor({ lanes: 1 }),
      components: [
        dispatchComponent({
          name: 'failing',
          source: failing,
          dispatch: {
            key: (m: Msg) => m.key,
            handle: () => throwError(() => new Error('projection store down')),
          },
          output: { error: (err) => errors.push(err) },
        }),
        dispatchComponent({
          name: 'healthy',
          source: healthy,
          dispatch: { key: (m: Msg) => m.key, handle: handlers.handle },
        }),
      ],
    }).start();
    failing.push(msg('a', 'a1'));
    healthy.push(msg('b', 'b1'));
    handlers.finish('b1');
    healthy.push(msg('b', 'b2'));
    expect(handlers.started).toEqual(['b1', 'b2']);
    const stopped = runtime.stopGracefully();
    handlers.finish('b2');
    const report = await stopped;
    expect(errors).toEqual([new Error('projection store down')]);
    expect(report.components.map((c) => [c.name, c.state])).toEqual([
      ['failing', 'errored'],
      ['healthy', 'drained'],
    ]);
    expect(report.components[0].error).toEqual(new Error('projection store down'));
  });

  it('counts messages a failure policy gave up on while stopping as failed, settled as failed', async () => {
    jest.useFakeTimers();
    const receiver = new ManualReceiver<Msg>();
    const runtime = new DispatchRuntime({
      executor: new KeyedExecutor({ lanes: 1 }),
      components: [
        dispatchComponent({
          name: 'commands',
          source: receiver,
          dispatch: {
            key: (m: Msg) => m.key,
            handle: (m: Msg) =>
              m.key === 'bad' ? throwError(() => new Error('conflict')) : timer(10).pipe(map(() => m)),
            failurePolicy: retryPolicy<Msg, string>({
              maxAttempts: 2,
              backoff: { initialMs: 100, jitter: 0 },
            }),
          },
        }),
      ],
    }).start();
    receiver.push(msg('bad', 'x1'), msg('ok', 'o1'));
    const stopped = runtime.stopGracefully({ timeoutMs: 1_000 });
    await jest.advanceTimersByTimeAsync(1_000);
    const report = await stopped;
    expect(report.outcome).toBe('drained');
    expect(report.components[0]).toMatchObject({ drained: 1, failed: 1, leftForRedelivery: [] });
    expect(settledIds(receiver).sort()).toEqual(['o1:done', 'x1:failed']);
  });

  it('rejects invalid options with a TypeError naming the option', () => {
    expect(() => new DispatchRuntime({ components: [] })).toThrow(
      'DispatchRuntime: expected `components` to be a non-empty array, got an array (object)',
    );
    const component = dispatchComponent({
      name: 'a',
      source: new ManualReceiver<Msg>(),
      dispatch: { key: (m: Msg) => m.key, handle: () => [] },
    });
    expect(() => new DispatchRuntime({ components: [component, component] })).toThrow(
      "DispatchRuntime: expected `components[1].name` to be a unique non-empty string, got 'a' (string)",
    );
    const runtime = new DispatchRuntime({
      components: [component],
      executor: new KeyedExecutor({ lanes: 1 }),
    });
    expect(() => runtime.stopGracefully({ timeoutMs: -1 })).toThrow(
      'stopGracefully: expected `timeoutMs` to be an integer from 0 to 2147483647, got -1 (number)',
    );
    expect(() => runtime.stopGracefully({ drain: 'some' as never })).toThrow(
      "stopGracefully: expected `drain` to be 'all' or 'running', got 'some' (string)",
    );
  });
});
