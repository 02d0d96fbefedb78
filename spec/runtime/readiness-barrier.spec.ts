import {
  DispatchRuntime,
  dispatchComponent,
  type KeyedDispatchOptions,
  KeyedExecutor,
  keyedDispatch,
  LocalBus,
} from 'keyed-dispatch';
import { ManualReceiver } from './manual-receiver';

interface Command {
  id: string;
  generation: number;
}
interface Event {
  id: string;
  generation: number;
}

/** A cyclic pipeline: command → event → (projection, saga) → saga's command, for generation 0 only. */
function pipeline(onProjected: (count: number) => void, onSaga: (count: number) => void) {
  const commands = new LocalBus<Command>();
  const events = new LocalBus<Event>();
  const handled = { commands: 0, projected: 0, saga: 0 };
  const components = [
    dispatchComponent({
      name: 'commands',
      source: commands.receive(),
      dispatch: {
        key: (c: Command) => c.id,
        handle: (c: Command) => {
          handled.commands++;
          void events.send({ id: c.id, generation: c.generation });
          return [];
        },
      },
    }),
    dispatchComponent({
      name: 'projection',
      source: events.receive(),
      dispatch: {
        key: (e: Event) => e.id,
        handle: () => {
          onProjected(++handled.projected);
          return [];
        },
      },
    }),
    dispatchComponent({
      name: 'saga',
      source: events.receive(),
      dispatch: {
        key: (e: Event) => e.id,
        handle: (e: Event) => {
          if (e.generation === 0) void commands.send({ id: e.id, generation: 1 });
          onSaga(++handled.saga);
          return [];
        },
      },
    }),
  ];
  return { commands, events, handled, components };
}

describe('DispatchRuntime readiness barrier', () => {
  it('subscribes every component before asking any receiver for messages, so a cyclic pipeline loses nothing', async () => {
    let sagaDone!: () => void;
    const sagaFinished = new Promise<void>((resolve) => (sagaDone = resolve));
    const { commands, handled, components } = pipeline(
      () => undefined,
      (n) => n === 20 && sagaDone(),
    );
    // Sent before start: they wait in the bus for the first receiver.
    for (let i = 0; i < 10; i++) void commands.send({ id: `order-${i}`, generation: 0 });
    const runtime = new DispatchRuntime({ components, executor: new KeyedExecutor({ lanes: 2 }) }).start();
    await sagaFinished;
    expect(handled).toEqual({ commands: 20, projected: 20, saga: 20 });
    const report = await runtime.stopGracefully({ timeoutMs: 1000 });
    expect(report.outcome).toBe('drained');
  });

  it('is needed: subscribing the same dispatchers one by one lets the saga miss the first events', async () => {
    let projectedAll!: () => void;
    const projected = new Promise<void>((resolve) => (projectedAll = resolve));
    const { commands, handled, components } = pipeline(
      (n) => n === 10 && projectedAll(),
      () => undefined,
    );
    for (let i = 0; i < 10; i++) void commands.send({ id: `order-${i}`, generation: 0 });
    const executor = new KeyedExecutor({ lanes: 2 });
    const subscriptions = components.map((c) =>
      c.source
        .pipe(keyedDispatch({ ...(c.dispatch as KeyedDispatchOptions<any, any, any>), executor }))
        .subscribe(),
    );
    await projected;
    // The events of the first commands went to the projection only: the saga was not subscribed yet.
    expect(handled).toEqual({ commands: 10, projected: 10, saga: 0 });
    for (const s of subscriptions) s.unsubscribe();
  });

  it('asks no receiver for messages until every component is subscribed, then asks each for its window', async () => {
    const receivers = [
      new ManualReceiver<string>(),
      new ManualReceiver<string>(),
      new ManualReceiver<string>(),
    ];
    const components = receivers.map((source, i) =>
      dispatchComponent({
        name: `c${i}`,
        source,
        dispatch: { key: (m: string) => m, maxInFlight: 8, handle: () => [] },
      }),
    );
    const runtime = new DispatchRuntime({ components, executor: new KeyedExecutor({ lanes: 1 }) }).start();
    const lastOpened = Math.max(...receivers.map((r) => r.openedAt));
    const firstRequest = Math.min(...receivers.map((r) => r.firstRequestAt));
    expect(lastOpened).toBeGreaterThanOrEqual(0);
    expect(firstRequest).toBeGreaterThan(lastOpened);
    expect(receivers.map((r) => r.requests)).toEqual([[8], [8], [8]]);
    await runtime.stopGracefully();
  });
});
