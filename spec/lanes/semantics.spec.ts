import { BroadcastChannel } from 'node:worker_threads';
import { DispatchStats, ExecutorClosedError, fromIterable, keyedDispatch } from 'keyed-dispatch';
import { lastValueFrom, toArray } from 'rxjs';
import { byKey, type LaneKind, laneKinds, type Msg, type Ran } from './lane-kinds';

/** Runs `messages` through keyedDispatch on `kind`'s lanes and collects every value. */
function dispatchAll(
  kind: LaneKind,
  executor: Parameters<typeof keyedDispatch<Msg, string, Ran>>[0]['executor'],
  handler: string,
  messages: Msg[],
  extra: Partial<Parameters<typeof keyedDispatch<Msg, string, Ran>>[0]> = {},
): Promise<Ran[]> {
  return lastValueFrom(
    fromIterable(messages).pipe(
      keyedDispatch<Msg, string, Ran>({
        executor,
        key: (m) => m.key,
        handle: kind.handler(handler),
        ...extra,
      }),
      toArray(),
    ),
  );
}

function waitFor<T>(channel: BroadcastChannel, accept: (data: T) => boolean): Promise<T> {
  return new Promise((resolve) => {
    const listener = (event: { data: unknown }) => {
      if (!accept(event.data as T)) return;
      channel.removeEventListener('message', listener as never);
      resolve(event.data as T);
    };
    channel.addEventListener('message', listener as never);
  });
}

describe.each(laneKinds)('on %s', (_name, kind) => {
  let lanes: ReturnType<LaneKind['executor']>;
  afterEach(async () => {
    await lanes?.close();
  });

  it('runs the messages of each key in receive order, whatever mix of sync and async handlers', async () => {
    lanes = kind.executor(2);
    const messages: Msg[] = [];
    for (let n = 0; n < 600; n++) messages.push({ key: `k${(n * 7919) % 23}`, n });
    const values = await dispatchAll(kind, lanes.executor, 'mixed', messages, { maxInFlight: 64 });
    expect(values).toHaveLength(600);
    for (const [key, list] of byKey(values)) {
      const expected = messages.filter((m) => m.key === key).map((m) => m.n);
      expect(list.map((v) => v.n)).toEqual(expected);
    }
  });

  it('keeps a mailbox on one lane while its key has unfinished messages, and uses every lane', async () => {
    lanes = kind.executor(2);
    const messages: Msg[] = [];
    for (let n = 0; n < 200; n++) messages.push({ key: `k${n % 10}`, n });
    const values = await dispatchAll(kind, lanes.executor, 'later', messages, { maxInFlight: 256 });
    for (const list of byKey(values).values()) expect(new Set(list.map((v) => v.lane)).size).toBe(1);
    expect(new Set(values.map((v) => v.lane))).toEqual(new Set([0, 1]));
    const threadsByLane = new Map<number, Set<number>>();
    for (const v of values) threadsByLane.set(v.lane, (threadsByLane.get(v.lane) ?? new Set()).add(v.thread));
    for (const threads of threadsByLane.values()) expect(threads.size).toBe(1);
    if (kind.name === 'thread lanes') {
      // Real threads: none of it ran on the main thread, and the two lanes are two threads.
      expect(values.every((v) => v.thread !== 0)).toBe(true);
      expect(new Set(values.map((v) => v.thread)).size).toBe(2);
    }
  });

  it('gives another key a turn after `throughput` synchronous messages of a busy key', async () => {
    lanes = kind.executor(1);
    const messages: Msg[] = [];
    for (let n = 0; n < 40; n++) messages.push({ key: 'busy', n });
    messages.push({ key: 'other', n: 0 });
    const values = await dispatchAll(kind, lanes.executor, 'echo', messages, {
      maxInFlight: 64,
      throughput: 16,
    });
    expect(values.map((v) => v.key).indexOf('other')).toBe(16);
  });

  it('frees the lane while a handler waits asynchronously, so other keys run meanwhile', async () => {
    lanes = kind.executor(1);
    // On one lane, the waiting handler can finish only if the other key runs while it waits.
    const messages: Msg[] = [
      { key: 'a', n: 0, op: 'wait', gate: `${kind.name}-release` },
      { key: 'b', n: 0, op: 'open', gate: `${kind.name}-release` },
    ];
    const values = await dispatchAll(kind, lanes.executor, 'gated', messages);
    expect(values.map((v) => v.op)).toEqual(['opened', 'waited']);
  });

  it('never holds more than `maxInFlight` unfinished messages', async () => {
    lanes = kind.executor(2);
    let pulled = 0;
    let settled = 0;
    let most = 0;
    function* source(): Generator<Msg> {
      for (let n = 0; n < 300; n++) {
        pulled++;
        most = Math.max(most, pulled - settled);
        yield { key: `k${n % 5}`, n };
      }
    }
    const stats = new DispatchStats();
    const values = await lastValueFrom(
      fromIterable(source(), { onSettled: () => settled++ }).pipe(
        keyedDispatch<Msg, string, Ran>({
          executor: lanes.executor,
          key: (m) => m.key,
          handle: kind.handler('later'),
          maxInFlight: 8,
          // The share off: no key's messages wait outside the window, so the window is all it holds.
          maxPerKey: 8,
          stats,
        }),
        toArray(),
      ),
    );
    expect(values).toHaveLength(300);
    expect(most).toBe(8);
    expect(stats.maxInFlightSeen).toBe(8);
  });

  it('cancels the handlers running on the lanes when the output is unsubscribed, settling nothing', async () => {
    lanes = kind.executor(2);
    const name = `cancel-${kind.name}`;
    const channel = new BroadcastChannel(name);
    try {
      const started = Promise.all([
        waitFor<{ started?: string }>(channel, (d) => d.started === 'a'),
        waitFor<{ started?: string }>(channel, (d) => d.started === 'b'),
      ]);
      const cancelled = Promise.all([
        waitFor<{ cancelled?: string }>(channel, (d) => d.cancelled === 'a'),
        waitFor<{ cancelled?: string }>(channel, (d) => d.cancelled === 'b'),
      ]);
      const settlements: string[] = [];
      const subscription = fromIterable<Msg>(
        [
          { key: 'a', n: 0, channel: name },
          { key: 'b', n: 0, channel: name },
        ],
        { onSettled: (m) => settlements.push(m.key) },
      )
        .pipe(
          keyedDispatch<Msg, string, Ran>({
            executor: lanes.executor,
            key: (m) => m.key,
            handle: kind.handler('hang'),
          }),
        )
        .subscribe();
      await started;
      subscription.unsubscribe();
      await cancelled;
      expect(settlements).toEqual([]);
    } finally {
      channel.close();
    }
  });

  it('errors the output with a handler error, synchronous or asynchronous, settling that message as failed', async () => {
    lanes = kind.executor(2);
    for (const async of [false, true]) {
      const failed: Array<[number, string]> = [];
      const run = lastValueFrom(
        fromIterable<Msg>([{ key: 'x', n: 1, async }], {
          onSettled: (m, outcome) => failed.push([m.n, outcome]),
        }).pipe(
          keyedDispatch<Msg, string, Ran>({
            executor: lanes.executor,
            key: (m) => m.key,
            handle: kind.handler('boom'),
          }),
        ),
      );
      await expect(run).rejects.toThrow(async ? 'async boom x' : 'boom x');
      expect(failed).toEqual([[1, 'failed']]);
    }
  });

  it('errors dispatchers still running with ExecutorClosedError when the executor closes', async () => {
    lanes = kind.executor(2);
    const name = `close-${kind.name}`;
    const channel = new BroadcastChannel(name);
    try {
      const started = waitFor<{ started?: string }>(channel, (d) => d.started === 'a');
      const run = lastValueFrom(
        fromIterable<Msg>([{ key: 'a', n: 0, channel: name }]).pipe(
          keyedDispatch<Msg, string, Ran>({
            executor: lanes.executor,
            key: (m) => m.key,
            handle: kind.handler('hang'),
          }),
        ),
      );
      const outcome = run.then(
        () => 'completed',
        (err: unknown) => err,
      );
      await started;
      const cancelled = waitFor<{ cancelled?: string }>(channel, (d) => d.cancelled === 'a');
      await lanes.close();
      expect(await outcome).toBeInstanceOf(ExecutorClosedError);
      await cancelled;
    } finally {
      channel.close();
    }
  });
});
