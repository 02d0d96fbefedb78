import {
  DispatchStats,
  fromIterable,
  keyedDispatch,
  MessageError,
  NOTHING,
  openReceiver,
  PullSession,
  Receiver,
  type ReceiverSession,
  type ReceiverSink,
  retryPolicy,
  type Settlement,
  type TransportFault,
  TransportUnreachableError,
  threadHandler,
} from 'keyed-dispatch';
import { lastValueFrom, toArray } from 'rxjs';
import { FIXTURES, type LaneKind, laneKinds, type Msg, type Ran } from '../lanes/lane-kinds';
import { outcomeOf, within } from '../lanes/shared-state';
import { sleep, waitFor } from '../support/waits';

/** A transport-like session over a list: says where each message came from, records each settlement. */
class Positions<T> extends PullSession<T> {
  private next = 0;
  constructor(
    sink: ReceiverSink<T>,
    private readonly items: readonly T[],
    private readonly settled: string[],
  ) {
    super(sink);
  }

  describe(message: T): string {
    return `list 'spec' position ${this.items.indexOf(message)}`;
  }

  protected override take(): T | typeof NOTHING {
    if (this.next < this.items.length) return this.items[this.next++];
    this.complete();
    return NOTHING;
  }

  protected override acknowledge(message: T, outcome: Settlement): void {
    this.settled.push(`${this.items.indexOf(message)} ${outcome}`);
  }
}

/** A receiver whose sessions `open` makes. */
function createReceiver<T>(open: (sink: ReceiverSink<T>) => ReceiverSession<T>): Receiver<T> {
  return new (class extends Receiver<T> {
    [openReceiver](sink: ReceiverSink<T>): ReceiverSession<T> {
      return open(sink);
    }
  })();
}

function positions<T>(items: readonly T[], settled: string[]) {
  return createReceiver<T>((sink) => new Positions(sink, items, settled));
}

describe.each(laneKinds)('the message-failure boundary on %s', (_name, kind) => {
  let lanes: ReturnType<LaneKind['executor']>;
  beforeEach(() => {
    lanes = kind.executor(1);
  });
  afterEach(() => lanes.close());

  function dispatch(items: Msg[], settled: string[], key: (m: Msg) => unknown, handler = 'echo') {
    return outcomeOf(
      within(
        lastValueFrom(
          positions(items, settled).pipe(
            keyedDispatch<Msg, unknown, Ran>({
              executor: lanes.executor as never,
              key,
              handle: kind.handler(handler) as never,
            }),
            toArray(),
          ),
        ),
        5000,
        'the output to end',
      ),
    );
  }

  it.each([
    ['undefined (a forgotten `return`)', undefined, 'undefined'],
    ['null', null, 'null'],
    ['a number', 5, 'number'],
  ])(
    'fails a message whose handler returns %s with a TypeError naming the key and the type',
    async (_what, result, type) => {
      const outcome = await dispatch([{ key: 'k7', n: 0, result }], [], (m) => m.key, 'returnsResult');
      expect(outcome).toEqual({ error: expect.any(MessageError) });
      const error = (outcome as { error: MessageError }).error;
      expect(error.cause).toEqual(
        expect.objectContaining({
          name: 'TypeError',
          message: expect.stringContaining(`\`handle\` returned ${type} for key k7`),
        }),
      );
      expect(error.key).toBe('k7');
    },
  );

  it('keeps its lanes after a handler returned nothing: the next dispatcher on the same executor runs', async () => {
    await dispatch([{ key: 'a', n: 0, result: undefined }], [], (m) => m.key, 'returnsResult');
    const outcome = await dispatch([{ key: 'b', n: 1 }], [], (m) => m.key);
    expect(outcome).toEqual({ value: [expect.objectContaining({ key: 'b', n: 1 })] });
  });

  it.each([
    [
      'throws',
      (m: Msg): unknown => {
        if (m.n === 1) throw new Error('no account in message');
        return m.key;
      },
    ],
    ['returns undefined', (m: Msg): unknown => (m.n === 1 ? undefined : m.key)],
    [
      'returns a Promise (an async selector)',
      (m: Msg): unknown => (m.n === 1 ? Promise.resolve(m.key) : m.key),
    ],
  ])(
    'never settles a message whose key selector %s, and errors the output naming where it came from',
    async (_what, key) => {
      const settled: string[] = [];
      const outcome = await dispatch(
        [
          { key: 'a', n: 0 },
          { key: 'b', n: 1 },
          { key: 'c', n: 2 },
        ],
        settled,
        key,
      );
      expect(outcome).toEqual({ error: expect.any(MessageError) });
      const error = (outcome as { error: MessageError }).error;
      expect(error.message).toContain("list 'spec' position 1");
      expect(error.source).toBe("list 'spec' position 1");
      expect(error.key).toBeUndefined();
      expect(settled).not.toContainEqual(expect.stringMatching(/^1 /));
    },
  );

  it('refuses a Promise as a key, which would give every message a key of its own and lose per-key order', async () => {
    const outcome = await dispatch([{ key: 'a', n: 0 }], [], async (m) => m.key);
    expect((outcome as { error: MessageError }).error.cause).toEqual(
      new TypeError(
        'keyedDispatch: `key` returned a Promise for a message; it is called synchronously (an async selector would give every message a key of its own, and no order)',
      ),
    );
  });
});

describe('the message-failure boundary with a failure policy', () => {
  it('hands a message whose key selector throws to the dead letter once (no retries), with no key, and settles it dead-lettered', async () => {
    const settled: string[] = [];
    const dead: Array<{ n: number; error: unknown; key: unknown; attempts: number }> = [];
    const items = [0, 1, 2, 3];
    const values = await within(
      lastValueFrom(
        positions(items, settled).pipe(
          keyedDispatch({
            key: (n: number) => {
              if (n === 2) throw new Error('malformed');
              return n % 2;
            },
            handle: (n: number) => [n],
            failurePolicy: retryPolicy<number, number>({
              maxAttempts: 5,
              deadLetter: (n, error, context) => {
                dead.push({ n, error, key: context.key, attempts: context.attempts });
              },
            }),
          }),
          toArray(),
        ),
      ),
      5000,
      'the output to complete',
    );
    expect(values).toEqual([0, 1, 3]);
    expect(dead).toEqual([
      { n: 2, error: expect.objectContaining({ message: 'malformed' }), key: undefined, attempts: 1 },
    ]);
    expect(settled.sort()).toEqual(['0 done', '1 done', '2 dead-lettered', '3 done']);
  });

  it('settles a message dead-lettered once its dead letter completed, and failed when the policy has no dead letter', async () => {
    for (const [deadLetter, outcome] of [
      [() => undefined, 'dead-lettered'],
      [undefined, 'failed'],
    ] as const) {
      const settled: string[] = [];
      await within(
        lastValueFrom(
          positions([0, 1], settled).pipe(
            keyedDispatch({
              key: (n: number) => n,
              handle: (n: number) => (n === 1 ? Promise.reject(new Error('boom')) : [n]),
              failurePolicy: retryPolicy<number, number>({ maxAttempts: 1, deadLetter }),
            }),
            toArray(),
          ),
        ),
        5000,
        'the output to complete',
      );
      expect(settled.sort()).toEqual(['0 done', `1 ${outcome}`]);
    }
  });

  it('errors the output with a MessageError naming the key, the source and the cause when a handler fails', async () => {
    const boom = new Error('store down');
    const outcome = await outcomeOf(
      lastValueFrom(
        positions(['x', 'y'], []).pipe(
          keyedDispatch({
            key: (s: string) => `key-${s}`,
            handle: (s: string) => (s === 'y' ? Promise.reject(boom) : [s]),
          }),
        ),
      ),
    );
    expect(outcome).toEqual({ error: expect.any(MessageError) });
    const error = (outcome as { error: MessageError }).error;
    expect(error).toMatchObject({
      name: 'MessageError',
      key: 'key-y',
      source: "list 'spec' position 1",
      cause: boom,
    });
    expect(error.message).toContain("key key-y of list 'spec' position 1");
    expect(error.message).toContain('store down');
  });

  it('leaves the error as thrown for a plain source, as mergeMap does', async () => {
    const boom = new Error('as thrown');
    const outcome = await outcomeOf(
      lastValueFrom(
        fromIterable([1]).pipe(keyedDispatch({ key: () => 'k', handle: () => Promise.reject(boom) })),
      ),
    );
    expect(outcome).toEqual({ error: boom });
  });
});

/** A session whose transport fails `failures` times, then recovers; the spec drives it. */
class Flaky extends PullSession<number> {
  constructor(
    sink: ReceiverSink<number>,
    options: { onTransportError?: (fault: TransportFault) => void; maxUnreachableMs?: number },
  ) {
    super(sink, undefined, {
      receiver: 'flaky()',
      onTransportError: options.onTransportError,
      maxUnreachableMs: options.maxUnreachableMs ?? 60_000,
    });
  }
  fetchFailed(error: unknown): void {
    this.transportFailed('fetch', error);
  }
  fetched(): void {
    this.transportRecovered();
  }
}

describe('transport faults a receiver survives', () => {
  it('are counted in the stats by operation and told to onTransportError', async () => {
    const stats = new DispatchStats();
    const faults: TransportFault[] = [];
    let session!: Flaky;
    const subscription = createReceiver<number>((sink) => {
      session = new Flaky(sink, { onTransportError: (fault) => faults.push(fault) });
      return session;
    })
      .pipe(keyedDispatch({ key: (n) => n, handle: (n: number) => [n], stats }))
      .subscribe({ error: () => undefined });
    session.fetchFailed(new Error('ECONNREFUSED'));
    session.fetchFailed(new Error('ECONNREFUSED'));
    session.fetched();
    expect(stats.snapshot().transportFaults).toEqual({ fetch: 2, commit: 0, heartbeat: 0, connection: 0 });
    expect(faults).toEqual([
      expect.objectContaining({
        operation: 'fetch',
        receiver: 'flaky()',
        error: expect.objectContaining({ message: 'ECONNREFUSED' }),
      }),
      expect.objectContaining({ operation: 'fetch' }),
    ]);
    expect(faults[1].failingSince).toBe(faults[0].failingSince);
    subscription.unsubscribe();
  });

  it('error the output with a TransportUnreachableError once they last maxUnreachableMs without a recovery', async () => {
    let session!: Flaky;
    const outcome = outcomeOf(
      lastValueFrom(
        createReceiver<number>((sink) => {
          session = new Flaky(sink, { maxUnreachableMs: 50 });
          return session;
        }).pipe(keyedDispatch({ key: (n) => n, handle: (n: number) => [n] })),
      ),
    );
    session.fetchFailed(new Error('ECONNREFUSED'));
    await sleep(20);
    session.fetchFailed(new Error('still refused'));
    const ended = await within(outcome, 2000, 'the output to error');
    expect(ended).toEqual({ error: expect.any(TransportUnreachableError) });
    expect((ended as { error: Error }).error.message).toMatch(
      /flaky\(\).*50 ms.*`maxUnreachableMs`.*still refused/,
    );
  });

  it('do not error the output when the transport recovered in time', async () => {
    let session!: Flaky;
    let errored: unknown;
    const subscription = createReceiver<number>((sink) => {
      session = new Flaky(sink, { maxUnreachableMs: 40 });
      return session;
    })
      .pipe(keyedDispatch({ key: (n) => n, handle: (n: number) => [n] }))
      .subscribe({ error: (err) => (errored = err) });
    session.fetchFailed(new Error('ECONNREFUSED'));
    session.fetched();
    await sleep(80);
    expect(errored).toBeUndefined();
    subscription.unsubscribe();
    await waitFor(() => subscription.closed, 1000, 'the unsubscription');
  });
});

describe('a transfer list on thread lanes', () => {
  const kind = laneKinds[1][1];
  let lanes: ReturnType<LaneKind['executor']>;
  beforeEach(() => {
    lanes = kind.executor(1);
  });
  afterEach(() => lanes.close());

  function run(messages: Msg[]) {
    return outcomeOf(
      within(
        lastValueFrom(
          fromIterable(messages).pipe(
            keyedDispatch<Msg, unknown, Ran>({
              executor: lanes.executor as never,
              key: (m) => m.key,
              // What a message moves to its thread instead of copying: its bytes.
              handle: threadHandler<Msg, Ran>(FIXTURES, 'bytes', {
                transfer: (m) => [(m.data as Uint8Array).buffer as ArrayBuffer],
              }),
            }),
            toArray(),
          ),
        ),
        5000,
        'the output to end',
      ),
    );
  }

  it('that lists a buffer another message listed already fails that message with a TypeError naming its key', async () => {
    const data = new Uint8Array(64).fill(1);
    const outcome = await run([
      { key: 'a', n: 0, data },
      { key: 'b', n: 1, data },
    ]);
    expect(outcome).toEqual({ error: expect.objectContaining({ name: 'TypeError' }) });
    expect((outcome as { error: Error }).error.message).toMatch(/transfer list of the message for key b/);
  });

  it('that lists a detached buffer fails that message instead of delivering 0 bytes', async () => {
    const data = new Uint8Array(64).fill(1);
    structuredClone(data.buffer, { transfer: [data.buffer] });
    const outcome = await run([{ key: 'c', n: 0, data }]);
    expect(outcome).toEqual({ error: expect.objectContaining({ name: 'TypeError' }) });
    expect((outcome as { error: Error }).error.message).toMatch(/key c.*detached/);
  });
});
