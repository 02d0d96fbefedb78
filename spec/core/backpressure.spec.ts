import { Readable } from 'node:stream';
import {
  DispatchStats,
  fromAsyncIterable,
  fromIterable,
  KeyedExecutor,
  keyedDispatch,
  LocalBus,
  WindowOverflowError,
} from 'keyed-dispatch';
import { from, lastValueFrom, Subject, take, toArray } from 'rxjs';
import { flushMicrotasks, Gates, ScriptedReceiver } from '../support/scripted-receiver';

interface Msg {
  key: string;
  seq: number;
}

function* numbered(count: number, keys: number): Generator<Msg> {
  for (let seq = 0; seq < count; seq++) yield { key: `k${seq % keys}`, seq };
}

describe('keyedDispatch backpressure', () => {
  let executor: KeyedExecutor;
  beforeEach(() => {
    executor = new KeyedExecutor({ lanes: 2 });
  });
  afterEach(() => executor.close());

  it('requests the whole window first, then batches of maxInFlight/16 as messages finish', async () => {
    const receiver = new ScriptedReceiver(numbered(1000, 100));
    const gates = new Gates();
    const sub = receiver
      .pipe(
        keyedDispatch({
          executor,
          maxInFlight: 32,
          key: (m: Msg) => m.key,
          handle: () => gates.open(),
        }),
      )
      .subscribe();
    expect(receiver.requests).toEqual([32]);
    expect(receiver.delivered).toBe(32);
    gates.release();
    await flushMicrotasks();
    expect(receiver.requests).toEqual([32]); // one free slot is less than a batch of 2
    gates.release();
    await flushMicrotasks();
    expect(receiver.requests).toEqual([32, 2]);
    expect(receiver.unsettled).toBe(32);
    sub.unsubscribe();
    expect(receiver.cancelled).toBe(true);
  });

  it('never holds more than maxInFlight unfinished messages, and settles each only after its handler completes', async () => {
    const receiver = new ScriptedReceiver(numbered(2000, 50));
    let maxUnsettled = 0;
    const handledBeforeSettle: boolean[] = [];
    const handled = new Set<number>();
    const out = await lastValueFrom(
      receiver.pipe(
        keyedDispatch({
          executor,
          maxInFlight: 64,
          key: (m: Msg) => m.key,
          handle: async (m: Msg) => {
            maxUnsettled = Math.max(maxUnsettled, receiver.unsettled);
            handledBeforeSettle.push(!receiver.settled.some((s) => s.message === m));
            await flushMicrotasks();
            handled.add(m.seq);
            return m.seq;
          },
        }),
        toArray(),
      ),
    );
    expect(out).toHaveLength(2000);
    expect(maxUnsettled).toBeLessThanOrEqual(64);
    expect(handledBeforeSettle.every(Boolean)).toBe(true);
    expect(receiver.settled.every((s) => s.outcome === 'done' && handled.has((s.message as Msg).seq))).toBe(
      true,
    );
  });

  it('with the per-key share off (maxPerKey = maxInFlight), stops intake while one hot key holds more than maxInFlight - batch unfinished messages', async () => {
    const hot = (function* () {
      for (let seq = 0; ; seq++) yield { key: 'hot', seq };
    })();
    const receiver = new ScriptedReceiver<Msg>(hot);
    const gates = new Gates();
    const stats = new DispatchStats();
    const sub = receiver
      .pipe(
        keyedDispatch({
          executor,
          stats,
          maxInFlight: 32,
          maxPerKey: 32,
          key: (m: Msg) => m.key,
          handle: () => gates.open(),
        }),
      )
      .subscribe();
    expect(stats.backlogOf('hot')).toBe(32);
    gates.release();
    await flushMicrotasks();
    expect(receiver.requests).toEqual([32]);
    expect(stats.backlogOf('hot')).toBe(31);
    sub.unsubscribe();
  });

  it('pulls an async iterable only as messages finish', async () => {
    let pulled = 0;
    async function* source() {
      for (let seq = 0; seq < 500; seq++) {
        pulled++;
        yield { key: `k${seq % 7}`, seq };
      }
    }
    let settled = 0;
    let maxAhead = 0;
    const out = await lastValueFrom(
      fromAsyncIterable(source(), { onSettled: () => settled++ }).pipe(
        keyedDispatch({
          executor,
          maxInFlight: 16,
          key: (m: Msg) => m.key,
          handle: async (m: Msg) => {
            maxAhead = Math.max(maxAhead, pulled - settled);
            await flushMicrotasks();
            return m;
          },
        }),
        toArray(),
      ),
    );
    expect(out).toHaveLength(500);
    expect(settled).toBe(500);
    expect(maxAhead).toBeLessThanOrEqual(16);
  });

  it('reads a Node Readable in per-key order', async () => {
    const readable = Readable.from(numbered(300, 10));
    const out = await lastValueFrom(
      fromAsyncIterable<Msg>(readable).pipe(
        keyedDispatch({ executor, maxInFlight: 8, key: (m: Msg) => m.key, handle: async (m: Msg) => m }),
        toArray(),
      ),
    );
    const perKey = new Map<string, number[]>();
    for (const m of out) perKey.set(m.key, [...(perKey.get(m.key) ?? []), m.seq]);
    expect(out).toHaveLength(300);
    for (const seqs of perKey.values()) expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  });

  it('asks a receiver for at most 1,024 at once, so with a large window messages that finish at once leave before more come in', async () => {
    const stats = new DispatchStats();
    const values = await lastValueFrom(
      fromIterable(numbered(20_000, 10_000)).pipe(
        keyedDispatch({
          executor,
          maxInFlight: 65_536,
          key: (m: Msg) => m.key,
          handle: async (m: Msg) => m.seq,
          stats,
        }),
        toArray(),
      ),
    );
    expect(values).toHaveLength(20_000);
    // The whole window at once would have held all 20,000 (and their mailboxes and Promises) together.
    expect(stats.snapshot().maxInFlightSeen).toBeLessThanOrEqual(2 * 1024);
  });

  it('pulls a synchronous iterable lazily, so an endless generator runs in bounded memory', async () => {
    let pulled = 0;
    function* endless() {
      for (let seq = 0; ; seq++) {
        pulled++;
        yield { key: `k${seq % 3}`, seq };
      }
    }
    const first = await lastValueFrom(
      fromIterable(endless()).pipe(
        keyedDispatch({
          executor,
          maxInFlight: 8,
          maxParked: 8,
          key: (m: Msg) => m.key,
          handle: (m: Msg) => [m.seq],
        }),
        take(100),
        toArray(),
      ),
    );
    expect(first).toHaveLength(100);
    for (let k = 0; k < 3; k++) {
      const seqs = first.filter((seq) => seq % 3 === k);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    }
    // What was taken beyond the 100 values: at most a window (8) and the parking area (8).
    expect(pulled).toBeLessThanOrEqual(100 + 8 + 8);
  });

  describe('LocalBus', () => {
    it('with maxPending: 0, resolves send() only when the dispatcher admits the message', async () => {
      const bus = new LocalBus<Msg>({ maxPending: 0 });
      const gates = new Gates();
      const sub = bus
        .receive()
        .pipe(
          keyedDispatch({
            executor,
            maxInFlight: 2,
            key: (m: Msg) => m.key,
            handle: () => gates.open(),
          }),
        )
        .subscribe();
      const admitted: number[] = [];
      for (let seq = 0; seq < 4; seq++) void bus.send({ key: `k${seq}`, seq }).then(() => admitted.push(seq));
      await flushMicrotasks();
      expect(admitted).toEqual([0, 1]);
      gates.release();
      gates.release();
      await flushMicrotasks();
      expect(admitted).toEqual([0, 1, 2, 3]);
      sub.unsubscribe();
    });

    it('keeps messages sent before any receiver subscribed, and completes receivers on close', async () => {
      const bus = new LocalBus<Msg>();
      const early = bus.send({ key: 'a', seq: 0 });
      const done = lastValueFrom(
        bus
          .receive()
          .pipe(keyedDispatch({ executor, key: (m: Msg) => m.key, handle: (m: Msg) => [m.seq] }), toArray()),
      );
      await early;
      await bus.send({ key: 'a', seq: 1 });
      bus.close();
      expect(await done).toEqual([0, 1]);
      await expect(bus.send({ key: 'a', seq: 2 })).rejects.toThrow('LocalBus is closed');
    });

    it('delivers every message to every subscribed receiver', async () => {
      const bus = new LocalBus<Msg>();
      const handle = (m: Msg) => [m.seq];
      const a = lastValueFrom(
        bus.receive().pipe(keyedDispatch({ executor, key: (m: Msg) => m.key, handle }), toArray()),
      );
      const b = lastValueFrom(
        bus.receive().pipe(keyedDispatch({ executor, key: (m: Msg) => m.key, handle }), toArray()),
      );
      for (let seq = 0; seq < 5; seq++) await bus.send({ key: 'k', seq });
      bus.close();
      expect(await a).toEqual([0, 1, 2, 3, 4]);
      expect(await b).toEqual([0, 1, 2, 3, 4]);
    });
  });

  describe('plain (non-pullable) sources', () => {
    it("buffers what outruns the window in arrival order and admits it as the window frees ('buffer')", async () => {
      const stats = new DispatchStats();
      const source = new Subject<Msg>();
      const gates = new Gates();
      const out: number[] = [];
      const sub = source
        .pipe(
          keyedDispatch({
            executor,
            stats,
            maxInFlight: 4,
            key: (m: Msg) => m.key,
            handle: (m: Msg) => {
              return gates.open().then(() => m.seq);
            },
          }),
        )
        .subscribe((v) => out.push(v));
      for (const m of numbered(10, 10)) source.next(m);
      expect(stats.snapshot()).toMatchObject({ inFlight: 4, overflow: 6 });
      while (gates.size > 0) {
        gates.release();
        await flushMicrotasks();
      }
      expect(out).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(stats.snapshot()).toMatchObject({ inFlight: 0, overflow: 0, maxInFlightSeen: 4 });
      sub.unsubscribe();
    });

    it("errors with WindowOverflowError when a plain source outruns the window ('error')", async () => {
      const result = lastValueFrom(
        from([...numbered(5, 5)]).pipe(
          keyedDispatch({
            executor,
            maxInFlight: 4,
            onOverflow: 'error',
            key: (m: Msg) => m.key,
            handle: () => new Promise<never>(() => {}),
          }),
        ),
      );
      await expect(result).rejects.toBeInstanceOf(WindowOverflowError);
      await expect(result).rejects.toThrow(/4 messages \(`maxInFlight`\)/);
    });
  });
});
