// DispatchRuntime on either kind of lane: `executor` takes a ThreadExecutor and the components' handlers
// are thread handlers. Kept in a file of its own: where `DispatchRuntimeOptions.executor` accepts only a
// KeyedExecutor this file does not compile, and that must not stop the other lane specs.
import { threadId } from 'node:worker_threads';
import {
  DispatchRuntime,
  dispatchComponent,
  fromIterable,
  KeyedExecutor,
  ThreadExecutor,
  threadHandler,
} from 'keyed-dispatch';
import { ManualReceiver } from '../runtime/manual-receiver';
import { sleep, waitFor } from '../support/waits';
import { FIXTURES, laneKinds, type Msg, type Ran } from './lane-kinds';
import { HeldBoard, within } from './shared-state';

const settledOf = (receiver: ManualReceiver<Msg>) =>
  receiver.settled.map((s) => `${s.message.key}${s.message.n}:${s.outcome}`);
const numbers = (messages: readonly unknown[]) => (messages as Msg[]).map((m) => m.n).sort((a, b) => a - b);

describe.each(laneKinds)('DispatchRuntime on %s', (_name, kind) => {
  let executor: KeyedExecutor | ThreadExecutor | undefined;
  let runtime: DispatchRuntime | undefined;
  let board: HeldBoard | undefined;
  /** Errors of the components' outputs (an unhandled one would be thrown off the stack). */
  let errors: unknown[] = [];
  afterEach(async () => {
    errors = [];
    board?.open();
    board = undefined;
    if (runtime !== undefined) await within(runtime.forceStop(), 10_000, 'the runtime to stop');
    runtime = undefined;
    await executor?.close();
    executor = undefined;
  });

  /**
   * `count` messages of key `a` for the `held` fixture: each counts its start on the board, then waits for
   * its release (blocking its thread on thread lanes).
   */
  function held(count: number): { started: HeldBoard; messages: Msg[] } {
    const started = new HeldBoard(count);
    board = started;
    const { starts, release } = started;
    const messages = Array.from({ length: count }, (_, n) => ({
      key: 'a',
      n,
      starts,
      release,
      block: kind.threads,
    }));
    return { started, messages };
  }

  /** A runtime on one lane of `kind` with component `orders` (the `held` fixture) reading `receiver`. */
  function ordersRuntime(receiver: ManualReceiver<Msg>): DispatchRuntime {
    executor = kind.executor(1).executor;
    runtime = new DispatchRuntime({
      executor,
      components: [
        dispatchComponent({
          name: 'orders',
          source: receiver,
          dispatch: { key: (m: Msg) => m.key, handle: kind.handler('held') },
          output: { error: (err) => errors.push(err) },
        }),
      ],
    });
    return runtime;
  }

  it('runs its components on the lanes, and drains running and queued messages on stopGracefully()', async () => {
    const receiver = new ManualReceiver<Msg>();
    const values: Ran[] = [];
    const echoed: Ran[] = [];
    let finishedCompleted = false;
    executor = kind.executor(1).executor;
    runtime = new DispatchRuntime({
      executor,
      components: [
        dispatchComponent({
          name: 'orders',
          source: receiver,
          dispatch: { key: (m: Msg) => m.key, handle: kind.handler('held') },
          output: { next: (v: Ran) => values.push(v), error: (err) => errors.push(err) },
        }),
        dispatchComponent({
          name: 'finished',
          source: fromIterable<Msg>([
            { key: 'x', n: 0 },
            { key: 'y', n: 1 },
          ]),
          dispatch: { key: (m: Msg) => m.key, handle: kind.handler('echo') },
          output: {
            next: (v: Ran) => echoed.push(v),
            error: (err) => errors.push(err),
            complete: () => (finishedCompleted = true),
          },
        }),
      ],
    });
    runtime.start();
    // 'finished' first: on one thread lane, a held handler blocks the thread (and what it reports).
    await waitFor(() => finishedCompleted, 10_000, 'finished to complete');
    const { started, messages } = held(3);
    receiver.push(...messages);
    await waitFor(() => started.started >= 1, 10_000, 'a0 to start');
    const stopping = runtime.stopGracefully({ timeoutMs: 10_000 });
    started.open();
    const report = await within(stopping, 15_000, 'the graceful stop');

    expect(errors).toEqual([]);
    expect(report.outcome).toBe('drained');
    expect(report.components.map((c) => [c.name, c.state, c.drained, c.failed, c.leftForRedelivery])).toEqual(
      [
        ['orders', 'drained', 3, 0, []],
        ['finished', 'completed', 0, 0, []],
      ],
    );
    expect(settledOf(receiver)).toEqual(['a0:done', 'a1:done', 'a2:done']);
    expect(values.map((v) => v.n)).toEqual([0, 1, 2]);
    expect(echoed.map((v) => v.n).sort()).toEqual([0, 1]);
    // On thread lanes the handlers ran in worker threads, on event-loop lanes on this thread.
    expect([...values, ...echoed].every((v) => (v.thread !== threadId) === kind.threads)).toBe(true);
    expect(executor.closed).toBe(true);
    expect(runtime.state).toBe('stopped');
  });

  it("with drain 'running', finishes the running handler and leaves queued messages for redelivery, never starting them", async () => {
    const receiver = new ManualReceiver<Msg>();
    const orders = ordersRuntime(receiver).start();
    const { started, messages } = held(4);
    receiver.push(...messages);
    await waitFor(() => started.started >= 1, 10_000, 'a0 to start');
    const stopping = orders.stopGracefully({ drain: 'running', timeoutMs: 10_000 });
    started.open();
    const report = await within(stopping, 15_000, 'the graceful stop');
    await sleep(300);

    expect(errors).toEqual([]);
    expect(report.outcome).toBe('drained');
    expect(report.components[0]).toMatchObject({ name: 'orders', state: 'drained', drained: 1, failed: 0 });
    expect(numbers(report.components[0].leftForRedelivery)).toEqual([1, 2, 3]);
    expect(settledOf(receiver)).toEqual(['a0:done']);
    expect([0, 1, 2, 3].map((n) => started.startsOf(n))).toEqual([1, 0, 0, 0]);
    expect(executor?.closed).toBe(true);
  });

  it('forceStop() cuts the running handler, leaves every unfinished message for redelivery and starts nothing more', async () => {
    const receiver = new ManualReceiver<Msg>();
    const orders = ordersRuntime(receiver).start();
    const { started, messages } = held(4);
    receiver.push(...messages);
    await waitFor(() => started.started >= 1, 10_000, 'a0 to start');
    const stopping = orders.forceStop();
    const startedWhenStopped = started.started;
    started.open();
    const report = await within(stopping, 10_000, 'the forced stop');
    await sleep(300);

    expect(errors).toEqual([]);
    expect(started.started).toBe(startedWhenStopped);
    expect(report.outcome).toBe('forced');
    expect(report.components[0]).toMatchObject({ name: 'orders', state: 'cut', drained: 0, failed: 0 });
    expect(numbers(report.components[0].leftForRedelivery)).toEqual([0, 1, 2, 3]);
    expect(receiver.settled).toEqual([]);
    expect(receiver.cancelled).toBe(true);
    expect(executor?.closed).toBe(true);
  });
});

describe('DispatchRuntime given a handler of the other lane kind than its executor', () => {
  it('rejects a function handler on a ThreadExecutor at construction, with a TypeError naming the component and the option', async () => {
    const executor = new ThreadExecutor({ workers: 1 });
    try {
      const construct = () =>
        new DispatchRuntime({
          executor,
          components: [
            dispatchComponent({
              name: 'projections',
              source: new ManualReceiver<Msg>(),
              dispatch: { key: (m: Msg) => m.key, handle: (m: Msg) => [m.n] },
            }),
          ],
        });
      expect(construct).toThrow(TypeError);
      expect(construct).toThrow(/projections/);
      expect(construct).toThrow(/`handle`|`executor`/);
    } finally {
      await executor.close();
    }
  });

  it('rejects a thread handler on a KeyedExecutor at construction, with a TypeError naming the component and the option', async () => {
    const executor = new KeyedExecutor({ lanes: 1 });
    try {
      const construct = () =>
        new DispatchRuntime({
          executor,
          components: [
            dispatchComponent({
              name: 'projections',
              source: new ManualReceiver<Msg>(),
              dispatch: { key: (m: Msg) => m.key, handle: threadHandler<Msg, Ran>(FIXTURES, 'echo') },
            }),
          ],
        });
      expect(construct).toThrow(TypeError);
      expect(construct).toThrow(/projections/);
      expect(construct).toThrow(/`handle`|`executor`/);
    } finally {
      await executor.close();
    }
  });
});
