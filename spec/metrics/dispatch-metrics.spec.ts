import {
  DispatchMetrics,
  fromIterable,
  KeyedExecutor,
  keyedDispatch,
  type MetricsSnapshot,
} from 'keyed-dispatch';
import { map, type Observable, Subject, take } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';

interface Message {
  key: string;
  seq: number;
}
const messages = (keys: string): Message[] => [...keys].map((key, seq) => ({ key, seq }));

/** Busy-runs the thread for `ms`: a handler that blocks its lane for a known minimum time. */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // blocking on purpose
  }
}

/** Runs one message per key of `keys` to completion, each handler blocking its lane for `busyMs(message)`. */
function runBusy(
  keys: string,
  busyMs: (m: Message) => number,
  options: { stats?: DispatchMetrics; executor?: KeyedExecutor } = {},
): void {
  fromIterable(messages(keys))
    .pipe(
      keyedDispatch({
        ...options,
        key: (m: Message) => m.key,
        handle: (m: Message) => {
          spin(busyMs(m));
          return [m];
        },
      }),
    )
    .subscribe();
}

/** A dispatch whose handlers wait on a Subject per message, completed by the test. */
function gated(keys: string, metrics: DispatchMetrics, lanes = 2) {
  const gates = new Map<number, Subject<void>>();
  const executor = new KeyedExecutor({ lanes });
  const done = new Subject<void>();
  const subscription = fromIterable(messages(keys))
    .pipe(
      keyedDispatch({
        executor,
        stats: metrics,
        key: (m: Message) => m.key,
        handle: (m: Message) => {
          const gate = new Subject<void>();
          gates.set(m.seq, gate);
          return gate as Observable<void>;
        },
      }),
    )
    .subscribe({ complete: () => done.next() });
  const open = (seq: number) => {
    const gate = gates.get(seq);
    if (!gate) throw new Error(`handler of message ${seq} has not started`);
    gate.complete();
  };
  return { open, subscription, executor, done };
}

describe('DispatchMetrics', () => {
  it('counts admitted, settled and in-flight messages as handlers complete', () => {
    const metrics = new DispatchMetrics();
    const run = gated('aab', metrics);
    expect(metrics.read()).toMatchObject({
      admitted: 3,
      settled: 0,
      failed: 0,
      inFlight: 3,
      liveMailboxes: 2,
    });
    run.open(0);
    run.open(2);
    expect(metrics.read()).toMatchObject({
      admitted: 3,
      settled: 2,
      inFlight: 1,
      liveMailboxes: 1,
      maxInFlight: 256,
    });
    run.open(1);
    expect(metrics.read()).toMatchObject({ settled: 3, inFlight: 0, liveMailboxes: 0, maxInFlightSeen: 3 });
  });

  it('counts failed handlers', () => {
    const metrics = new DispatchMetrics();
    let error: unknown;
    fromIterable(messages('ab'))
      .pipe(
        keyedDispatch({
          stats: metrics,
          key: (m: Message) => m.key,
          handle: (m: Message) => {
            if (m.key === 'b') throw new Error('boom');
            return [m];
          },
        }),
      )
      .subscribe({ error: (e) => (error = e) });
    expect(error).toEqual(new Error('boom'));
    expect(metrics.read()).toMatchObject({ admitted: 2, settled: 1, failed: 1 });
  });

  it('lists the keys with the largest backlog first, up to `hotKeys`', () => {
    const metrics = new DispatchMetrics({ hotKeys: 2 });
    const run = gated('aaaaabbc', metrics);
    expect(metrics.read().hotKeys).toEqual([
      { key: 'a', backlog: 5, parked: 0 },
      { key: 'b', backlog: 2, parked: 0 },
    ]);
    run.open(0);
    run.open(1);
    run.open(2);
    run.open(3);
    expect(metrics.read().hotKeys).toEqual([
      { key: 'b', backlog: 2, parked: 0 },
      { key: 'a', backlog: 1, parked: 0 },
    ]);
    run.subscription.unsubscribe();
  });

  it("reports each lane's ready-queue depth and pinned mailboxes", () => {
    const metrics = new DispatchMetrics();
    const executor = new KeyedExecutor({ lanes: 1 });
    let seen: MetricsSnapshot['lanes'] = [];
    fromIterable(messages('abc'))
      .pipe(
        keyedDispatch({
          executor,
          stats: metrics,
          key: (m: Message) => m.key,
          handle: (m: Message) => {
            // The whole batch is admitted before any turn runs: b and c wait behind a on the one lane.
            if (m.key === 'a') seen = metrics.read().lanes;
            return [m];
          },
        }),
      )
      .subscribe();
    expect(seen).toEqual([expect.objectContaining({ index: 0, ready: 2, pinned: 3 })]);
    expect(metrics.read().lanes).toEqual([expect.objectContaining({ index: 0, ready: 0, pinned: 0 })]);
  });

  it('times every handler from start to completion when sampleEvery is 1', () => {
    const metrics = new DispatchMetrics({ sampleEvery: 1 });
    runBusy('abcd', () => 2, { stats: metrics });
    const { latency } = metrics.read();
    expect(latency.count).toBe(4);
    expect(latency.p50Ms).toBeGreaterThanOrEqual(2 * 0.968);
    expect(latency.maxMs).toBeGreaterThanOrEqual(latency.p99Ms);
  });

  it('times one handler in `sampleEvery`', () => {
    const metrics = new DispatchMetrics({ sampleEvery: 4 });
    fromIterable(messages('abcdefghij'))
      .pipe(keyedDispatch({ stats: metrics, key: (m: Message) => m.key, handle: (m: Message) => [m] }))
      .subscribe();
    expect(metrics.read().latency.count).toBe(2);
  });

  it('times an asynchronous handler from its start to its completion on a later run', async () => {
    const metrics = new DispatchMetrics({ sampleEvery: 1 });
    // One key: the second handler starts (on its own turn) after the first is timed to completion.
    await new Promise<void>((resolve, reject) =>
      fromIterable(messages('aa'))
        .pipe(
          keyedDispatch({
            stats: metrics,
            key: (m: Message) => m.key,
            handle: (m: Message) => new Promise<Message>((done) => setTimeout(() => done(m), 20)),
          }),
        )
        .subscribe({ error: reject, complete: resolve }),
    );
    const { latency } = metrics.read();
    expect(latency.count).toBe(2);
    expect(latency.p50Ms).toBeGreaterThanOrEqual(19);
  });

  it('estimates the time each lane spends running', () => {
    const metrics = new DispatchMetrics({ sampleEvery: 1 });
    const executor = new KeyedExecutor({ lanes: 2 });
    runBusy('abcd', () => 2, { stats: metrics, executor });
    const lanes = metrics.read().lanes;
    expect(lanes.map((l) => l.index)).toEqual([0, 1]);
    expect(lanes[0].busyMs + lanes[1].busyMs).toBeGreaterThanOrEqual(8);
    for (const lane of lanes) expect(lane.busyRatio).toBeLessThanOrEqual(1);
  });

  it('estimates busy time from one drain in `sampleEvery`, counted that many times and shared by handler runs', () => {
    const metrics = new DispatchMetrics({ sampleEvery: 2 });
    /** How long each handler actually ran, in arrival order. */
    const took: number[] = [];
    const executor = new KeyedExecutor({ lanes: 2 });
    const source = new Subject<Message>();
    const sub = source
      .pipe(
        keyedDispatch({
          stats: metrics,
          executor,
          key: (m: Message) => m.key,
          handle: (m: Message) => {
            const since = performance.now();
            spin(8);
            took.push(performance.now() - since);
            return [m];
          },
        }),
      )
      .subscribe();
    // Four messages, each run by a drain of its own (8 ms or more on a busy machine): the second and the
    // fourth are timed and counted twice — not once (unscaled), not every drain.
    for (const [seq, key] of ['a', 'b', 'c', 'd'].entries()) source.next({ key, seq });
    const lanes = metrics.read().lanes;
    const total = lanes[0].busyMs + lanes[1].busyMs;
    const timed = 2 * (took[1] + took[3]);
    expect(total).toBeGreaterThanOrEqual(timed);
    // A drain lasts its handler's run and a little more (the turn around it): far less than another run.
    expect(total).toBeLessThan(timed + 2 * 4);
    // a and c ran on lane 0, b and d on lane 1: each timed drain went to the lane it ran.
    expect(lanes[0].busyMs).toBe(0);
    expect(lanes[1].busyMs).toBeGreaterThanOrEqual(24);
    sub.unsubscribe();
  });

  it('counts synchronous turns longer than `longTurnMs`', () => {
    const metrics = new DispatchMetrics({ longTurnMs: 5 });
    runBusy('abc', (m) => (m.key === 'b' ? 0 : 6), { stats: metrics });
    const { longTurns } = metrics.read();
    expect(longTurns.count).toBe(2);
    expect(longTurns.maxMs).toBeGreaterThanOrEqual(6);
  });

  it('watches no lane once the dispatcher has ended and the work of that moment is done', async () => {
    const metrics = new DispatchMetrics({ longTurnMs: 1 });
    fromIterable(messages('a'))
      .pipe(keyedDispatch({ stats: metrics, key: (m: Message) => m.key, handle: (m: Message) => [m] }))
      .subscribe();
    await Promise.resolve(); // the watches stop in a microtask queued when the dispatcher ended
    // The dispatcher's own run may already count as long on a loaded machine: only later turns matter.
    const before = metrics.read().longTurns.count;
    runBusy('b', () => 3);
    expect(metrics.read().longTurns.count).toBe(before);
  });

  it('emits a snapshot every period with rates and backlog over that period (virtual time)', () => {
    const ts = new TestScheduler((a, b) => expect(a).toEqual(b));
    ts.run(({ hot, cold, expectObservable }) => {
      const metrics = new DispatchMetrics();
      const executor = new KeyedExecutor({ lanes: 2 });
      // 4 messages of key a at 1 ms, each handled in 4 ms: settled at 5, 9, 13, 17 ms.
      const source = hot<Message>('-(abcd)', {
        a: { key: 'a', seq: 0 },
        b: { key: 'a', seq: 1 },
        c: { key: 'a', seq: 2 },
        d: { key: 'a', seq: 3 },
      });
      source
        .pipe(
          keyedDispatch({
            executor,
            stats: metrics,
            key: (m: Message) => m.key,
            handle: () => cold('----|'),
          }),
        )
        .subscribe();
      const view = (s: MetricsSnapshot) => ({
        time: s.time,
        windowMs: s.windowMs,
        settled: s.settled,
        settledPerSecond: s.settledPerSecond,
        inFlight: s.inFlight,
        hotKeys: s.hotKeys,
      });
      expectObservable(metrics.snapshots(10).pipe(take(2), map(view))).toBe('10ms x 9ms (y|)', {
        x: {
          time: 10,
          windowMs: 10,
          settled: 2,
          settledPerSecond: 200,
          inFlight: 2,
          hotKeys: [{ key: 'a', backlog: 2, parked: 0 }],
        },
        y: { time: 20, windowMs: 10, settled: 4, settledPerSecond: 200, inFlight: 0, hotKeys: [] },
      });
    });
  });

  it('keeps the final counters and the lanes after the dispatch completes', () => {
    const metrics = new DispatchMetrics();
    const executor = new KeyedExecutor({ lanes: 3 });
    fromIterable(messages('abcab'))
      .pipe(
        keyedDispatch({ executor, stats: metrics, key: (m: Message) => m.key, handle: (m: Message) => [m] }),
      )
      .subscribe();
    const final = metrics.read();
    expect(final).toMatchObject({ admitted: 5, settled: 5, inFlight: 0, hotKeys: [] });
    expect(final.lanes).toHaveLength(3);
  });

  it('rejects invalid options, naming the option and the value', () => {
    expect(() => new DispatchMetrics({ sampleEvery: 0 })).toThrow(
      'DispatchMetrics: expected `sampleEvery` to be an integer >= 1, got 0 (number)',
    );
    expect(() => new DispatchMetrics({ hotKeys: 1.5 })).toThrow(
      'DispatchMetrics: expected `hotKeys` to be an integer >= 0, got 1.5 (number)',
    );
    expect(() => new DispatchMetrics({ longTurnMs: -1 })).toThrow(
      'DispatchMetrics: expected `longTurnMs` to be a number > 0, got -1 (number)',
    );
    expect(() => new DispatchMetrics().snapshots(0)).toThrow(
      'DispatchMetrics.snapshots: expected `periodMs` to be an integer from 1 to 2147483647, got 0 (number)',
    );
  });
});
