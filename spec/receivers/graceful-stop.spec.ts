import { Readable } from 'node:stream';
import {
  DispatchRuntime,
  dispatchComponent,
  fromAsyncIterable,
  fromIterable,
  KeyedExecutor,
  LocalBus,
  openReceiver,
  PullSession,
  Receiver,
  type ReceiverSession,
  type ReceiverSink,
  type StopReport,
} from 'keyed-dispatch';
import type { Observable } from 'rxjs';

interface Msg {
  key: string;
  id: number;
}

/** A promise with its resolve at hand. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** Resolves once `condition` holds (checked every millisecond), or fails after 5 s. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > 5000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** One component over `source`, handling each message by recording its id (after `handling`, if given). */
function runtimeOver(source: Observable<Msg>, handled: number[], handling?: Promise<void>) {
  const executor = new KeyedExecutor({ lanes: 1 });
  const runtime = new DispatchRuntime({
    executor,
    components: [
      dispatchComponent({
        name: 'items',
        source,
        dispatch: {
          key: (m: Msg) => m.key,
          handle: async (m: Msg) => {
            await handling;
            handled.push(m.id);
          },
          maxInFlight: 2,
        },
      }),
    ],
  });
  return runtime;
}

/** Ids the stop report left for redelivery. */
function leftOf(report: StopReport): number[] {
  const [component] = report.components;
  return ((component?.leftForRedelivery ?? []) as Msg[]).map((m) => m.id);
}

describe('a graceful stop of a DispatchRuntime loses nothing taken from a receiver', () => {
  it('fromAsyncIterable: the item a read under way yields after intake closed is reported in leftForRedelivery', async () => {
    // Items 0 and 1 come at once; item 2 is read while the stop begins and yielded only after it.
    const reading = gate();
    const yielded: number[] = [];
    async function* source(): AsyncGenerator<Msg> {
      for (let id = 0; id < 10; id++) {
        if (id === 2) await reading.promise;
        yielded.push(id);
        yield { key: `k${id}`, id };
      }
    }
    const handled: number[] = [];
    const runtime = runtimeOver(fromAsyncIterable(source()), handled);
    runtime.start();
    await until(() => handled.length === 2, 'items 0 and 1 to be handled');
    const stopping = runtime.stopGracefully({ timeoutMs: 5000 });
    reading.open();
    const report = await stopping;
    expect(yielded).toEqual([0, 1, 2]);
    expect(handled).toEqual([0, 1]);
    expect(leftOf(report)).toEqual([2]);
    expect(report.outcome).toBe('drained');
  });

  it('fromAsyncIterable: five stops in a row each account for every item the generator yielded', async () => {
    for (let run = 0; run < 5; run++) {
      const yielded: number[] = [];
      async function* source(): AsyncGenerator<Msg> {
        for (let id = 0; ; id++) {
          await new Promise((resolve) => setTimeout(resolve, 1));
          yielded.push(id);
          yield { key: `k${id % 3}`, id };
        }
      }
      const handled: number[] = [];
      const runtime = runtimeOver(fromAsyncIterable(source()), handled);
      runtime.start();
      await until(() => handled.length >= 5 + run, 'a few items to be handled');
      const report = await runtime.stopGracefully({ timeoutMs: 5000 });
      // Long enough for a read still under way to yield its item (each takes a millisecond).
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect([...handled, ...leftOf(report)].sort((a, b) => a - b)).toEqual(yielded);
      expect(report.outcome).toBe('drained');
    }
  });

  it('fromAsyncIterable: a read that yields nothing by the deadline ends the stop with outcome deadline, saying so', async () => {
    async function* source(): AsyncGenerator<Msg> {
      yield { key: 'k0', id: 0 };
      await new Promise(() => {});
    }
    const handled: number[] = [];
    const runtime = runtimeOver(fromAsyncIterable(source()), handled);
    runtime.start();
    await until(() => handled.length === 1, 'item 0 to be handled');
    const report = await runtime.stopGracefully({ timeoutMs: 200 });
    expect(report.outcome).toBe('deadline');
    expect(report.components[0]?.sourceErrors).toEqual([
      expect.objectContaining({ message: 'the source had not finished closing by the stop deadline' }),
    ]);
    expect(leftOf(report)).toEqual([]);
    expect(handled).toEqual([0]);
  });

  it('fromAsyncIterable over an idle Readable: the stop destroys the stream, ending the read under way, and drains', async () => {
    const readable = new Readable({ objectMode: true, read() {} });
    readable.push({ key: 'k0', id: 0 });
    const handled: number[] = [];
    const runtime = runtimeOver(fromAsyncIterable<Msg>(readable), handled);
    runtime.start();
    await until(() => handled.length === 1, 'item 0 to be handled');
    const report = await runtime.stopGracefully({ timeoutMs: 3000 });
    expect(report.outcome).toBe('drained');
    expect(report.components[0]?.sourceErrors).toEqual([]);
    expect(readable.destroyed).toBe(true);
  });

  it('fromIterable: takes an item only when it can deliver it, so every item pulled is handled or left', async () => {
    const pulled: number[] = [];
    function* source(): Generator<Msg> {
      for (let id = 0; id < 100; id++) {
        pulled.push(id);
        yield { key: `k${id % 3}`, id };
      }
    }
    const handling = gate();
    const handled: number[] = [];
    const runtime = runtimeOver(fromIterable(source()), handled, handling.promise);
    runtime.start();
    await until(() => pulled.length >= 2, 'the window to fill');
    const stopping = runtime.stopGracefully({ timeoutMs: 5000 });
    handling.open();
    const report = await stopping;
    expect([...handled, ...leftOf(report)].sort((a, b) => a - b)).toEqual(pulled);
    expect(pulled.length).toBeLessThan(100);
    expect(report.outcome).toBe('drained');
  });

  it('a receiver of your own on PullSession: a message handed back with undelivered() is reported in leftForRedelivery', async () => {
    const reading = gate();
    /**
     * Reads messages 0, 1, 2 from a source that cannot give them again; message 2's read ends late. Its
     * close waits for the read under way, so a stop reports what that read brings.
     */
    class OneShotSession extends PullSession<Msg> {
      private readonly reads: Promise<void>;
      constructor(sink: ReceiverSink<Msg>) {
        super(sink);
        let reads!: Promise<void>;
        this.runLoop(() => {
          reads = this.readAll();
          return reads;
        });
        this.reads = reads;
      }
      private async readAll(): Promise<void> {
        for (let id = 0; id < 3 && (await this.whenDemand()); id++) {
          if (id === 2) await reading.promise;
          const message = { key: `k${id}`, id };
          if (!this.deliver(message)) this.undelivered(message);
        }
      }
      protected override close(): Promise<void> {
        return this.reads;
      }
    }
    class OneShotReceiver extends Receiver<Msg> {
      [openReceiver](sink: ReceiverSink<Msg>): ReceiverSession<Msg> {
        return new OneShotSession(sink);
      }
    }
    const handled: number[] = [];
    const runtime = runtimeOver(new OneShotReceiver(), handled);
    runtime.start();
    await until(() => handled.length === 2, 'messages 0 and 1 to be handled');
    const stopping = runtime.stopGracefully({ timeoutMs: 5000 });
    reading.open();
    const report = await stopping;
    expect(handled).toEqual([0, 1]);
    expect(leftOf(report)).toEqual([2]);
    expect(report.outcome).toBe('drained');
  });

  it('LocalBus: messages sent and accepted but not taken in yet are reported in leftForRedelivery', async () => {
    const bus = new LocalBus<Msg>();
    const handling = gate();
    const handled: number[] = [];
    const runtime = runtimeOver(bus.receive(), handled, handling.promise);
    runtime.start();
    const sent = Array.from({ length: 10 }, (_, id) => ({ key: `k${id % 3}`, id }));
    // Every send resolves: each is among the first 1,024 waiting in the receiver's queue.
    await Promise.all(sent.map((m) => bus.send(m)));
    const stopping = runtime.stopGracefully({ timeoutMs: 5000 });
    handling.open();
    const report = await stopping;
    // The window (2) held two; the other eight waited in the receiver's queue when intake closed.
    expect(handled).toHaveLength(2);
    expect([...handled, ...leftOf(report)].sort((a, b) => a - b)).toEqual(sent.map((m) => m.id));
    expect(report.outcome).toBe('drained');
  });
});
