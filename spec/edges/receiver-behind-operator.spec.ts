import {
  DispatchRuntime,
  dispatchComponent,
  fromAsyncIterable,
  fromIterable,
  KeyedExecutor,
  keyedDispatch,
  LocalBus,
  openReceiver,
  Receiver,
  type ReceiverSession,
  type ReceiverSink,
  type Settlement,
} from 'keyed-dispatch';
import { EMPTY, filter, isObservable, lastValueFrom, map, merge, type Observable, toArray } from 'rxjs';
import { runTransformExample } from '../../examples/transform-before-dispatch';
import { flushMicrotasks } from '../support/scripted-receiver';

interface Msg {
  key: string;
  seq: number;
}

const executor = new KeyedExecutor({ lanes: 2 });

afterAll(() => executor.close());

/** A generator that counts how many items were pulled from it. */
function counted(n: number) {
  const state = { pulled: 0 };
  function* items() {
    for (let seq = 0; seq < n; seq++) {
      state.pulled++;
      yield { key: `k${seq % 3}`, seq };
    }
  }
  return { state, items: items() };
}

/** A receiver that records whether a session was ever opened (a transport connection, in real life). */
class RecordingReceiver extends Receiver<Msg> {
  opened = 0;
  [openReceiver](sink: ReceiverSink<Msg>): ReceiverSession<Msg> {
    this.opened++;
    return {
      request: () => sink.next({ key: 'a', seq: 0 }),
      settle: () => undefined,
      cancel: () => undefined,
    };
  }
}

async function errorOf(source: Observable<unknown>): Promise<unknown> {
  return lastValueFrom(source).then(
    () => {
      throw new Error('expected the output to error');
    },
    (err: unknown) => err,
  );
}

describe('a receiver behind another operator', () => {
  it('errors at subscribe with a TypeError that says how to fix it, pulling and settling nothing', async () => {
    const { state, items } = counted(10);
    const settled: string[] = [];
    let handled = 0;
    const err = await errorOf(
      fromIterable(items, { onSettled: (m, outcome) => settled.push(`${m.seq}:${outcome}`) }).pipe(
        map((m) => m),
        keyedDispatch({
          executor,
          key: (m: Msg) => m.key,
          handle: () => {
            handled++;
            return [];
          },
        }),
      ),
    );
    expect(err).toBeInstanceOf(TypeError);
    expect((err as Error).message).toMatch(/^fromIterable\(\) must be piped straight into keyedDispatch/);
    expect((err as Error).message).toMatch(/acknowledges each message after its handler finished/);
    expect((err as Error).message).toMatch(/`key` and `handle`/);
    expect((err as Error).message).toMatch(/Transforming messages/);
    expect((err as Error).message).toMatch(/\.acknowledgeOnReceipt\(\).*at-most-once/);
    expect(state.pulled).toBe(0);
    expect(settled).toEqual([]);
    expect(handled).toBe(0);
  });

  it('errors the same way when subscribed directly, naming the receiver, without opening its session', () => {
    const receiver = new RecordingReceiver();
    const errors: unknown[] = [];
    const values: Msg[] = [];
    receiver.subscribe({ next: (m) => values.push(m), error: (err) => errors.push(err) });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(TypeError);
    expect((errors[0] as Error).message).toMatch(
      /^RecordingReceiver must be piped straight into keyedDispatch/,
    );
    expect(values).toEqual([]);
    expect(receiver.opened).toBe(0);
  });

  it('errors behind merge, filter and friends, naming each built-in receiver', async () => {
    const bus = new LocalBus<Msg>();
    async function* none(): AsyncGenerator<Msg> {}
    await expect(errorOf(bus.receive().pipe(filter(() => true)))).resolves.toThrow(
      /^LocalBus\.receive\(\) must be piped straight into keyedDispatch/,
    );
    await expect(errorOf(merge(fromAsyncIterable(none()), fromIterable<Msg>([])))).resolves.toThrow(
      /^fromAsyncIterable\(\) must be piped straight into keyedDispatch/,
    );
    bus.close();
  });

  it('leaves a LocalBus message with the bus, for the receiver that is piped straight into keyedDispatch', async () => {
    const bus = new LocalBus<Msg>();
    void bus.send({ key: 'a', seq: 0 });
    const wrong = await errorOf(bus.receive().pipe(map((m) => m)));
    expect(wrong).toBeInstanceOf(TypeError);
    expect(bus.receivers).toBe(0);
    const out = lastValueFrom(
      bus
        .receive()
        .pipe(keyedDispatch({ executor, key: (m: Msg) => m.key, handle: (m: Msg) => [m.seq] }), toArray()),
    );
    bus.close();
    expect(await out).toEqual([0]);
  });

  it('fails a DispatchRuntime component whose source is a receiver behind an operator, with the same TypeError', async () => {
    const errors: unknown[] = [];
    const { items } = counted(5);
    const runtime = new DispatchRuntime({
      components: [
        dispatchComponent({
          name: 'mapped',
          source: fromIterable(items).pipe(map((m) => m)),
          dispatch: { key: (m: Msg) => m.key, handle: () => [] },
          output: { error: (err) => errors.push(err) },
        }),
      ],
      executor: new KeyedExecutor({ lanes: 1 }),
    }).start();
    await flushMicrotasks();
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toMatch(
      /^fromIterable\(\) must be piped straight into keyedDispatch/,
    );
    await runtime.stopGracefully({ timeoutMs: 100 });
  });
});

describe('acknowledgeOnReceipt(): the explicit at-most-once opt-in', () => {
  it('is a plain Observable (keyedDispatch cannot pull it) that settles each message done as soon as next returns, before its handler ran', async () => {
    const events: string[] = [];
    const receiver = fromIterable<Msg>(
      [
        { key: 'a', seq: 0 },
        { key: 'a', seq: 1 },
      ],
      { onSettled: (m, outcome) => events.push(`settled ${m.seq}:${outcome}`) },
    );
    const atMostOnce = receiver.acknowledgeOnReceipt();
    expect(isObservable(atMostOnce)).toBe(true);
    expect(atMostOnce).not.toBeInstanceOf(Receiver);
    const out = await lastValueFrom(
      atMostOnce.pipe(
        map((m) => ({ ...m, seq: m.seq * 10 })),
        keyedDispatch({
          executor,
          key: (m: Msg) => m.key,
          handle: async (m: Msg) => {
            events.push(`handled ${m.seq}`);
            return m.seq;
          },
        }),
        toArray(),
      ),
    );
    expect(out).toEqual([0, 10]);
    // Message 1 is settled done while message 0 still runs, before its own handler started.
    expect(events).toEqual(['handled 0', 'settled 0:done', 'settled 1:done', 'handled 10']);
  });

  it('requests without limit and cancels the session when unsubscribed', () => {
    const requests: number[] = [];
    let cancelled = 0;
    const receiver = new (class extends Receiver<number> {
      [openReceiver](sink: ReceiverSink<number>): ReceiverSession<number> {
        return {
          request: (n) => {
            requests.push(n);
            sink.next(1);
          },
          settle: () => undefined,
          cancel: () => {
            cancelled++;
          },
        };
      }
    })();
    const values: number[] = [];
    const sub = receiver.acknowledgeOnReceipt().subscribe((v) => values.push(v));
    expect(requests).toEqual([Number.POSITIVE_INFINITY]);
    expect(values).toEqual([1]);
    sub.unsubscribe();
    expect(cancelled).toBe(1);
  });
});

describe('keyedDispatch straight after a receiver', () => {
  it('settles each message only after its handler finished', async () => {
    const events: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const out = lastValueFrom(
      fromIterable<Msg>([{ key: 'a', seq: 0 }], {
        onSettled: (m, outcome: Settlement) => events.push(`settled ${m.seq}:${outcome}`),
      }).pipe(
        keyedDispatch({
          executor,
          key: (m: Msg) => m.key,
          handle: async (m: Msg) => {
            events.push(`started ${m.seq}`);
            await gate;
            events.push(`finished ${m.seq}`);
            return m.seq;
          },
        }),
        toArray(),
      ),
    );
    await flushMicrotasks();
    expect(events).toEqual(['started 0']);
    release();
    expect(await out).toEqual([0]);
    expect(events).toEqual(['started 0', 'finished 0', 'settled 0:done']);
  });
});

describe('transforming messages in key and handle (examples/transform-before-dispatch.ts)', () => {
  it('deserializes once per message, filters with EMPTY, enriches, and acknowledges each message after its handler', async () => {
    const run = await runTransformExample();
    // Every raw record is acknowledged, the filtered and the malformed ones included, each after its handler.
    expect(run.acknowledged.map((a) => a.offset)).toEqual(expect.arrayContaining([0, 1, 2, 3, 4, 5, 6, 7]));
    expect(run.acknowledged).toHaveLength(8);
    for (const a of run.acknowledged) expect(a.outcome).toBe('done');
    for (const offset of [0, 1, 2, 3, 4, 5, 6, 7])
      expect(run.log.indexOf(`ack ${offset}`)).toBeGreaterThan(run.log.indexOf(`handled ${offset}`));
    // Deserialized once per message, though both `key` and `handle` read the parsed form.
    expect(run.parses).toBe(8);
    // Zero-amount deposits are filtered out; the malformed record is set aside.
    expect(run.malformed).toEqual([5]);
    expect([...run.applied].sort((a, b) => a.offset - b.offset)).toEqual([
      { offset: 0, account: 'acc-1', amount: 10, currency: 'EUR' },
      { offset: 1, account: 'acc-2', amount: 5, currency: 'GBP' },
      { offset: 3, account: 'acc-1', amount: 7, currency: 'EUR' },
      { offset: 6, account: 'acc-2', amount: 1, currency: 'GBP' },
      { offset: 7, account: 'acc-1', amount: 2, currency: 'EUR' },
    ]);
    expect(run.balances).toEqual({ 'acc-1': 19, 'acc-2': 6 });
  });

  it('returns EMPTY from a filtering handler: nothing is emitted, and the message is settled done after it', async () => {
    const settled: string[] = [];
    const out = await lastValueFrom(
      fromIterable<Msg>(
        [
          { key: 'a', seq: 0 },
          { key: 'a', seq: 1 },
        ],
        { onSettled: (m, outcome) => settled.push(`${m.seq}:${outcome}`) },
      ).pipe(
        keyedDispatch({
          executor,
          key: (m: Msg) => m.key,
          handle: (m: Msg) => (m.seq === 0 ? EMPTY : [m.seq]),
        }),
        toArray(),
      ),
    );
    expect(out).toEqual([1]);
    expect(settled).toEqual(['0:done', '1:done']);
  });
});
