import { DispatchRuntime, dispatchComponent, fromIterable, KeyedExecutor } from 'keyed-dispatch';
import { Subject } from 'rxjs';
import { within } from '../lanes/shared-state';

describe("stopGracefully({ drain: 'running' }) with a plain source", () => {
  it('leaves the messages waiting outside the window for redelivery and never starts them', async () => {
    const source = new Subject<number>();
    const started: number[] = [];
    const release: Array<() => void> = [];
    const runtime = new DispatchRuntime({
      executor: new KeyedExecutor({ lanes: 1 }),
      components: [
        dispatchComponent({
          name: 'plain',
          source,
          dispatch: {
            key: (n: number) => n,
            maxInFlight: 2,
            handle: (n: number) => {
              started.push(n);
              return new Promise<number>((resolve) => release.push(() => resolve(n)));
            },
          },
          output: { error: () => undefined },
        }),
      ],
    }).start();
    for (let n = 0; n < 10; n++) source.next(n);
    // Two run (the window), eight wait outside it.
    expect(started).toEqual([0, 1]);
    const stopping = runtime.stopGracefully({ drain: 'running', timeoutMs: 5000 });
    for (const finish of release) finish();
    const report = await within(stopping, 5000, 'the stop');
    expect(started).toEqual([0, 1]);
    expect(report.components[0].leftForRedelivery).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    expect(report.components[0].drained).toBe(2);
    expect(report.outcome).toBe('drained');
  });
});

describe("stopGracefully({ drain: 'running' }) with a receiver that delivers synchronously", () => {
  it('starts no handler once the stop began: the window freed by the discard asks for nothing more', async () => {
    let stopCalled = false;
    let startedAfterStop = 0;
    const release: Array<() => void> = [];
    const runtime = new DispatchRuntime({
      executor: new KeyedExecutor({ lanes: 1 }),
      components: [
        dispatchComponent({
          name: 'sync receiver',
          source: fromIterable(Array.from({ length: 1000 }, (_, n) => n)),
          dispatch: {
            key: (n: number) => n % 10,
            maxInFlight: 64,
            handle: (n: number) => {
              if (stopCalled) startedAfterStop++;
              return new Promise<number>((resolve) => release.push(() => resolve(n)));
            },
          },
          output: { error: () => undefined },
        }),
      ],
    }).start();
    await new Promise((resolve) => setTimeout(resolve, 20));
    stopCalled = true;
    const stopping = runtime.stopGracefully({ drain: 'running', timeoutMs: 3000 });
    for (const finish of release.splice(0)) finish();
    const started = Date.now();
    const report = await within(stopping, 5000, 'the stop');
    expect(startedAfterStop).toBe(0);
    expect(report.outcome).toBe('drained');
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
