import { DispatchStats, fromIterable, KeyedExecutor, keyedDispatch } from 'keyed-dispatch';
import { firstValueFrom, from, Subject, take, tap, toArray } from 'rxjs';
import { lanesOf } from '../../src/dispatch/lanes';
import { flushMicrotasks, Gates } from '../support/scripted-receiver';
import { type Deferred, deferred } from '../support/waits';

interface Msg {
  key: string;
  seq: number;
}

const byKey = (m: Msg) => m.key;

describe('keyedDispatch semantics (event-loop lanes)', () => {
  let executor: KeyedExecutor;
  beforeEach(() => {
    executor = new KeyedExecutor({ lanes: 3 });
  });
  afterEach(() => executor.close());

  it('handles the messages of a key one at a time, in receive order, across async handlers', async () => {
    const started: string[] = [];
    let running = 0;
    let maxRunning = 0;
    const messages = Array.from({ length: 30 }, (_, i) => ({ key: 'k', seq: i }));
    const out = await firstValueFrom(
      from(messages).pipe(
        keyedDispatch({
          executor,
          key: byKey,
          handle: async (m: Msg) => {
            started.push(`${m.seq}`);
            maxRunning = Math.max(maxRunning, ++running);
            await flushMicrotasks();
            running--;
            return m.seq;
          },
        }),
        toArray(),
      ),
    );
    expect(out).toEqual(messages.map((m) => m.seq));
    expect(maxRunning).toBe(1);
  });

  it('overlaps handlers of different keys', async () => {
    const gates: Record<string, Deferred<void>> = { a: deferred(), b: deferred() };
    const started: string[] = [];
    const done = firstValueFrom(
      from([
        { key: 'a', seq: 1 },
        { key: 'b', seq: 2 },
      ]).pipe(
        keyedDispatch({
          executor,
          key: byKey,
          handle: async (m: Msg) => {
            started.push(m.key);
            await gates[m.key].promise;
            return m.key;
          },
        }),
        toArray(),
      ),
    );
    await flushMicrotasks();
    expect(started).toEqual(['a', 'b']);
    gates.b.resolve();
    gates.a.resolve();
    expect(await done).toEqual(['b', 'a']);
  });

  it('keeps a mailbox only while its key has unfinished messages', async () => {
    const stats = new DispatchStats();
    const gate = deferred();
    const source = new Subject<Msg>();
    const out = source
      .pipe(keyedDispatch({ executor, stats, key: byKey, handle: () => gate.promise }))
      .subscribe();
    for (let i = 0; i < 10; i++) source.next({ key: `k${i % 5}`, seq: i });
    expect(stats.liveMailboxes).toBe(5);
    expect(stats.backlogOf('k0')).toBe(2);
    expect(executor.liveMailboxes).toBe(5);
    gate.resolve();
    await flushMicrotasks();
    expect(stats.liveMailboxes).toBe(0);
    expect(executor.liveMailboxes).toBe(0);
    expect(stats.snapshot()).toMatchObject({ inFlight: 0, admitted: 10, settled: 10 });
    out.unsubscribe();
  });

  it('gives a key that comes back after draining a live mailbox again, placed anew, and none once it drains', async () => {
    const stats = new DispatchStats();
    const source = new Subject<Msg>();
    let gate = deferred();
    const lanes: number[] = [];
    const out = source
      .pipe(
        keyedDispatch({
          executor,
          stats,
          key: byKey,
          handle: (_m: Msg, ctx) => {
            lanes.push(ctx.laneIndex);
            return gate.promise;
          },
        }),
      )
      .subscribe();
    source.next({ key: 'k', seq: 0 });
    expect(stats.liveMailboxes).toBe(1);
    gate.resolve();
    await flushMicrotasks();
    expect(stats.liveMailboxes).toBe(0);
    expect(executor.liveMailboxes).toBe(0);
    // k comes back and is placed by the rule again: lanes are taken in turn, so after 'other' took
    // lane 1, k lands on lane 2, not on the lane 0 its drained mailbox had.
    gate = deferred();
    source.next({ key: 'other', seq: 1 });
    source.next({ key: 'k', seq: 2 });
    expect(stats.liveMailboxes).toBe(2);
    expect(lanes).toEqual([0, 1, 2]);
    gate.resolve();
    await flushMicrotasks();
    expect(stats.liveMailboxes).toBe(0);
    expect(executor.liveMailboxes).toBe(0);
    out.unsubscribe();
  });

  it('pins a mailbox to one lane for its whole lifetime', async () => {
    const lanes = new Map<string, Set<number>>();
    const source = new Subject<Msg>();
    const gates = new Gates();
    const sub = source
      .pipe(
        keyedDispatch({
          executor,
          key: byKey,
          handle: (m: Msg, ctx) => {
            lanes.set(m.key, (lanes.get(m.key) ?? new Set()).add(ctx.laneIndex));
            return gates.open();
          },
        }),
      )
      .subscribe();
    for (let i = 0; i < 12; i++) source.next({ key: `k${i % 4}`, seq: i });
    // Release handlers one by one: the mailboxes live on, their next messages start on the same lane.
    while (gates.size > 0) {
      gates.release();
      await flushMicrotasks();
    }
    expect(lanes.size).toBe(4);
    for (const seen of lanes.values()) expect(seen.size).toBe(1);
    sub.unsubscribe();
  });

  it('places new mailboxes on the lanes in turn', () => {
    const placed: Array<[string, number]> = [];
    const never = new Promise<never>(() => {});
    const sub = from(['a', 'b', 'c', 'd', 'e', 'f'].map((key, seq) => ({ key, seq })))
      .pipe(
        keyedDispatch({
          executor,
          key: byKey,
          handle: (m: Msg, ctx) => {
            placed.push([m.key, ctx.laneIndex]);
            return never;
          },
        }),
      )
      .subscribe();
    // All six arrive in one admission batch: each lane in turn, twice.
    expect(placed.sort()).toEqual([
      ['a', 0],
      ['b', 1],
      ['c', 2],
      ['d', 0],
      ['e', 1],
      ['f', 2],
    ]);
    sub.unsubscribe();
  });

  it('takes the lanes in turn across the dispatchers sharing an executor, not each from the first', () => {
    const four = new KeyedExecutor({ lanes: 4 });
    const placed: number[] = [];
    const never = new Promise<never>(() => {});
    const subs = [0, 1, 2, 3].map((d) =>
      from([{ key: `k${d}`, seq: d }])
        .pipe(
          keyedDispatch({
            executor: four,
            key: byKey,
            handle: (_m: Msg, ctx) => {
              placed.push(ctx.laneIndex);
              return never;
            },
          }),
        )
        .subscribe(),
    );
    expect(placed).toEqual([0, 1, 2, 3]);
    for (const sub of subs) sub.unsubscribe();
  });

  it('places a mailbox created during a turn on the running lane when nothing else is queued there', () => {
    const source = new Subject<Msg>();
    const lanes: Record<string, number> = {};
    const sub = source
      .pipe(
        keyedDispatch({
          executor,
          key: byKey,
          handle: (m: Msg, ctx) => {
            lanes[m.key] = ctx.laneIndex;
            if (m.key === 'parent') source.next({ key: 'child', seq: 2 });
            return [m];
          },
        }),
      )
      .subscribe();
    source.next({ key: 'other', seq: 0 });
    source.next({ key: 'parent', seq: 1 });
    expect(lanes.child).toBe(lanes.parent);
    sub.unsubscribe();
  });

  it('never starts a handler inside another: a key that a handler feeds into the source starts after it returns', () => {
    const source = new Subject<Msg>();
    const events: string[] = [];
    const sub = source
      .pipe(
        keyedDispatch({
          executor,
          key: byKey,
          handle: (m: Msg) => {
            events.push(`${m.key} starts`);
            if (m.key === 'parent') source.next({ key: 'child', seq: 1 });
            events.push(`${m.key} returns`);
            return [m];
          },
        }),
      )
      .subscribe();
    source.next({ key: 'parent', seq: 0 });
    expect(events).toEqual(['parent starts', 'parent returns', 'child starts', 'child returns']);
    sub.unsubscribe();
  });

  describe('starting a key that a refill brings', () => {
    /**
     * Keys A, B and C on one lane, two at a time: A waits for `signal`; when it ends (inside what `endA`
     * runs it from), its place in the window goes to C. `handle` sees B and C; `downstream` every value.
     */
    async function endingAInside(
      handle: (m: Msg, signal: Subject<string>) => string[],
      downstream = tap<string>(),
    ) {
      const single = new KeyedExecutor({ lanes: 1 });
      const signal = new Subject<string>();
      const messages = ['A', 'B', 'C'].map((key, seq) => ({ key, seq }));
      const values = await firstValueFrom(
        fromIterable(messages).pipe(
          keyedDispatch({
            executor: single,
            maxInFlight: 2,
            key: byKey,
            handle: (m: Msg) => (m.key === 'A' ? signal.pipe(take(1)) : handle(m, signal)),
          }),
          downstream,
          toArray(),
        ),
      );
      await single.close();
      return values;
    }

    it('spreads them over the lanes in turn: no lane is left without keys', async () => {
      const four = new KeyedExecutor({ lanes: 4 });
      const messages = Array.from({ length: 4000 }, (_, seq) => ({ key: `k${seq}`, seq }));
      const lastHalf = [0, 0, 0, 0];
      await firstValueFrom(
        fromIterable(messages).pipe(
          keyedDispatch({
            executor: four,
            maxInFlight: 32,
            key: byKey,
            handle: (m: Msg, ctx) => {
              if (m.seq >= 2000) lastHalf[ctx.laneIndex]++;
              // Ends in an order of their own, not the order they started in.
              return new Promise<Msg>((resolve) => setTimeout(() => resolve(m), (m.seq * 7) % 4));
            },
          }),
          toArray(),
        ),
      );
      for (const started of lastHalf) expect(started).toBeGreaterThan(200);
      await four.close();
    });

    it('waits while a handler that ended another key in its turn is still running', async () => {
      const startedInsideB: string[] = [];
      let inB = false;
      const values = await endingAInside((m, signal) => {
        if (inB) startedInsideB.push(m.key);
        if (m.key === 'B') {
          inB = true;
          signal.next('from B');
          inB = false;
        }
        return [m.key];
      });
      expect(values).toEqual(['from B', 'B', 'C']);
      expect(startedInsideB).toEqual([]);
    });

    it('waits while a subscriber that ended another key downstream is still running', async () => {
      const startedInsideNext: string[] = [];
      let inNext = false;
      let signalled: Subject<string> | undefined;
      const values = await endingAInside(
        (m, signal) => {
          signalled = signal;
          if (inNext) startedInsideNext.push(m.key);
          return [m.key];
        },
        tap((value) => {
          if (value !== 'B') return;
          inNext = true;
          signalled?.next('from downstream');
          inNext = false;
        }),
      );
      expect(values).toEqual(['from downstream', 'B', 'C']);
      expect(startedInsideNext).toEqual([]);
    });

    /**
     * A plain source with `onOverflow: 'buffer'` on one lane: 32 keys fill the window, waiting on one gate,
     * then `more` overflows behind them and the gate opens. Resolves to every value emitted.
     */
    async function overflowing(
      more: (source: Subject<Msg>) => void,
      handle: (m: Msg, source: Subject<Msg>) => Msg[],
    ) {
      const single = new KeyedExecutor({ lanes: 1 });
      const source = new Subject<Msg>();
      const gate = deferred();
      const done = firstValueFrom(
        source.pipe(
          keyedDispatch({
            executor: single,
            maxInFlight: 32,
            onOverflow: 'buffer',
            key: byKey,
            handle: (m: Msg) => (m.key.startsWith('a') ? gate.promise.then(() => m) : handle(m, source)),
          }),
          toArray(),
        ),
      );
      for (let i = 0; i < 32; i++) source.next({ key: `a${i}`, seq: i });
      more(source);
      gate.resolve();
      const values = await done;
      await single.close();
      return values;
    }

    it('waits while a handler that feeds a plain source is running, under onOverflow: buffer', async () => {
      const startedInsideX: string[] = [];
      let inX = false;
      const values = await overflowing(
        (source) => source.next({ key: 'x', seq: 0 }),
        (m, source) => {
          if (inX) startedInsideX.push(m.key);
          if (m.key === 'x') {
            inX = true;
            source.next({ key: 'y', seq: 1 });
            source.complete();
            inX = false;
          }
          return [m];
        },
      );
      expect(values).toHaveLength(34);
      expect(startedInsideX).toEqual([]);
    });

    it('keeps the stack flat however many overflowed keys finish at once', async () => {
      let deepest = 0;
      const depth = () => {
        const limit = Error.stackTraceLimit;
        Error.stackTraceLimit = Number.POSITIVE_INFINITY;
        const frames = (new Error().stack ?? '').split('\n').length;
        Error.stackTraceLimit = limit;
        return frames;
      };
      const values = await overflowing(
        (source) => {
          for (let i = 0; i < 500; i++) source.next({ key: `k${i}`, seq: i });
          source.complete();
        },
        (m) => {
          deepest = Math.max(deepest, depth());
          return [m];
        },
      );
      expect(values).toHaveLength(532);
      // A few dozen frames of RxJS and the dispatcher under each handler, not one more per message.
      expect(deepest).toBeLessThan(200);
    });
  });

  it('gives a hot key at most `throughput` synchronous messages per turn before other mailboxes of its lane', async () => {
    const single = new KeyedExecutor({ lanes: 1 });
    const messages = [
      ...Array.from({ length: 10 }, (_, i) => ({ key: 'hot', seq: i })),
      { key: 'cold', seq: 99 },
    ];
    const order = await firstValueFrom(
      // A receiver admits them in one batch (a plain source runs each message as it arrives).
      fromIterable(messages).pipe(
        keyedDispatch({
          executor: single,
          throughput: 4,
          key: byKey,
          handle: (m: Msg) => [`${m.key}${m.seq}`],
        }),
        toArray(),
      ),
    );
    expect(order).toEqual([
      'hot0',
      'hot1',
      'hot2',
      'hot3',
      'cold99',
      'hot4',
      'hot5',
      'hot6',
      'hot7',
      'hot8',
      'hot9',
    ]);
    await single.close();
  });

  it('lets a lane start 16 handlers before the next lane with ready work gets the thread, finishing the turn in progress', async () => {
    const two = new KeyedExecutor({ lanes: 2 });
    // a and b arrive in one admission batch and land on the two lanes in turn.
    const messages = [
      ...Array.from({ length: 22 }, (_, i) => ({ key: 'a', seq: i })),
      ...Array.from({ length: 22 }, (_, i) => ({ key: 'b', seq: i })),
    ];
    const order = await firstValueFrom(
      // A receiver admits them in one batch (a plain source runs each message as it arrives).
      fromIterable(messages).pipe(
        keyedDispatch({ executor: two, throughput: 6, key: byKey, handle: (m: Msg) => [`${m.key}${m.seq}`] }),
        toArray(),
      ),
    );
    // Turns of 6: the lane's third turn reaches 18 ≥ 16 handlers, then the other lane runs.
    const run = (key: string, from: number, to: number) =>
      Array.from({ length: to - from }, (_, i) => `${key}${from + i}`);
    expect(order).toEqual([...run('a', 0, 18), ...run('b', 0, 18), ...run('a', 18, 22), ...run('b', 18, 22)]);
    await two.close();
  });

  it('lets other keys of the same lane run while an async handler waits', async () => {
    const single = new KeyedExecutor({ lanes: 1 });
    const gate = deferred<string>();
    const source = new Subject<Msg>();
    const seen: string[] = [];
    const sub = source
      .pipe(
        keyedDispatch({
          executor: single,
          key: byKey,
          handle: (m: Msg) => (m.key === 'slow' ? gate.promise : [`${m.key}${m.seq}`]),
        }),
      )
      .subscribe((v) => seen.push(v));
    source.next({ key: 'slow', seq: 0 });
    for (let i = 1; i <= 3; i++) source.next({ key: 'fast', seq: i });
    expect(seen).toEqual(['fast1', 'fast2', 'fast3']);
    gate.resolve('slow0');
    await flushMicrotasks();
    expect(seen).toEqual(['fast1', 'fast2', 'fast3', 'slow0']);
    sub.unsubscribe();
    await single.close();
  });

  it("observes an async handler's continuation on its mailbox's lane", async () => {
    const observed: Array<[number, number | undefined]> = [];
    const values = await firstValueFrom(
      from([0, 1, 2, 3, 4, 5].map((seq) => ({ key: `k${seq}`, seq }))).pipe(
        keyedDispatch({
          executor,
          key: byKey,
          handle: async (m: Msg, ctx) => {
            await flushMicrotasks();
            return { seq: m.seq, lane: ctx.laneIndex };
          },
        }),
        tap((v) => observed.push([v.lane, lanesOf(executor)?.local?.currentLane?.index])),
        toArray(),
      ),
    );
    expect(values).toHaveLength(6);
    for (const [lane, current] of observed) expect(current).toBe(lane);
  });
});
