import {
  DispatchMetrics,
  DispatchRuntime,
  dispatchComponent,
  fromIterable,
  KeyedExecutor,
  keyedBatchDispatch,
  keyedDispatch,
  LocalBus,
  openReceiver,
  PullSession,
  Receiver,
  type ReceiverSession,
  type ReceiverSink,
  retryPolicy,
  type TransportFault,
} from 'keyed-dispatch';
import { lastValueFrom, Observable, throwError, toArray } from 'rxjs';
import { type LaneKind, laneKinds, type Msg } from '../lanes/lane-kinds';
import { outcomeOf, within } from '../lanes/shared-state';
import { aFewTurns, recordEscapes } from '../support/escapes';
import { waitFor } from '../support/waits';

// User code that fails asynchronously (a rejection, an erroring Observable) must land where its
// synchronous throw does: never an unhandled rejection, an uncaught exception or a stuck message.

let record: ReturnType<typeof recordEscapes>;
beforeEach(() => {
  record = recordEscapes();
});
afterEach(() => record.restore());

const messages = (count: number, key = (n: number) => `k${n % 4}`): Msg[] =>
  Array.from({ length: count }, (_, n) => ({ key: key(n), n }));

describe('an async onSettled that rejects', () => {
  it('errors the output as a throwing onSettled does, and nothing escapes', async () => {
    const boom = new Error('onSettled rejected');
    const bus = new LocalBus<Msg>();
    const output = outcomeOf(
      within(
        lastValueFrom(
          bus
            .receive({
              onSettled: async () => {
                throw boom;
              },
            })
            .pipe(keyedDispatch({ key: (m: Msg) => m.key, handle: (m: Msg) => [m.n] }), toArray()),
        ),
        5_000,
        'the output',
      ),
    );
    for (const m of messages(8)) bus.send(m);
    const outcome = await output;
    await aFewTurns();
    expect(outcome).toEqual({ error: boom });
    expect(record.escaped).toEqual([]);
  });
});

/** A receiver whose transport fails once, then delivers `items` and completes: a transport that retried. */
function recoveringReceiver(items: Msg[], onTransportError: (fault: TransportFault) => unknown) {
  class Session extends PullSession<Msg> {
    private readonly left = [...items];
    constructor(sink: ReceiverSink<Msg>) {
      super(sink, undefined, {
        receiver: 'recovering()',
        onTransportError: onTransportError as (fault: TransportFault) => void,
        maxUnreachableMs: 60_000,
      });
      this.transportFailed('fetch', new Error('fetch failed'));
      this.transportRecovered();
    }
    protected override take(): Msg | typeof import('keyed-dispatch').NOTHING {
      const next = this.left.shift();
      if (next === undefined) {
        queueMicrotask(() => this.complete());
        return NOTHING_VALUE;
      }
      return next;
    }
  }
  return new (class extends Receiver<Msg> {
    [openReceiver](sink: ReceiverSink<Msg>): ReceiverSession<Msg> {
      return new Session(sink);
    }
  })();
}
const NOTHING_VALUE = require('keyed-dispatch').NOTHING;

describe('an async onTransportError that rejects', () => {
  it.each([
    [
      'throws',
      () => {
        throw new Error('listener threw');
      },
    ],
    ['rejects', async () => Promise.reject(new Error('listener rejected'))],
  ])('is reported as a process warning when it %s, and the transport goes on', async (_, listener) => {
    const values = await within(
      lastValueFrom(
        recoveringReceiver(messages(6), listener).pipe(
          keyedDispatch({ key: (m: Msg) => m.key, handle: (m: Msg) => [m.n] }),
          toArray(),
        ),
      ),
      5_000,
      'the output',
    );
    await aFewTurns();
    expect(values.sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(record.escaped).toEqual([]);
    expect(record.warnings).toEqual([expect.stringMatching(/onTransportError/)]);
  });
});

describe('an async onLongTurn that rejects', () => {
  it('is no longer called and a process warning says why, as when it throws', async () => {
    let calls = 0;
    const executor = new KeyedExecutor({
      lanes: 2,
      longTurnMs: 1,
      onLongTurn: async () => {
        calls++;
        throw new Error('onLongTurn rejected');
      },
    });
    try {
      const busy = (m: Msg): number[] => {
        const until = performance.now() + 3;
        while (performance.now() < until);
        return [m.n];
      };
      const run = () =>
        within(
          lastValueFrom(
            fromIterable(messages(6)).pipe(
              keyedDispatch({ executor, key: (m: Msg) => m.key, handle: busy }),
              toArray(),
            ),
          ),
          5_000,
          'the output',
        );
      expect(await run()).toHaveLength(6);
      await aFewTurns();
      // Turns of the same drain may call it before its rejection arrives; none after.
      const before = calls;
      expect(before).toBeGreaterThan(0);
      expect(await run()).toHaveLength(6);
      await aFewTurns();
      expect(calls).toBe(before);
      expect(record.escaped).toEqual([]);
      expect(record.warnings).toEqual([expect.stringMatching(/onLongTurn/)]);
    } finally {
      await executor.close();
    }
  });
});

describe.each(laneKinds)('retryPolicy({ random }) on %s', (_, kind: LaneKind) => {
  let lanes: ReturnType<LaneKind['executor']>;
  beforeEach(() => {
    lanes = kind.executor(2);
  });
  afterEach(() => lanes.close());

  /** Dispatches messages of key 'a' whose handler rejects (`async: true`), under `random`. */
  function run(random: () => number, handle = kind.handler('boom')) {
    return outcomeOf(
      within(
        lastValueFrom(
          fromIterable<Msg>([{ key: 'a', n: 2, async: true }]).pipe(
            keyedDispatch({
              executor: lanes.executor,
              key: (m: Msg) => m.key,
              handle,
              failurePolicy: retryPolicy<Msg, string>({ maxAttempts: 3, backoff: { initialMs: 1 }, random }),
            }),
            toArray(),
          ),
        ),
        5_000,
        'the output',
      ),
    );
  }

  it('that throws after a rejection errors the output, as a throwing retryable does', async () => {
    const boom = new Error('random threw');
    const outcome = await run(() => {
      throw boom;
    });
    await aFewTurns();
    expect(outcome).toEqual({ error: boom });
    expect(record.escaped).toEqual([]);
  });

  if (!kind.threads) {
    it('that throws after an erroring Observable errors the output', async () => {
      const boom = new Error('random threw');
      const outcome = await run(
        () => {
          throw boom;
        },
        () =>
          new Observable<never>((s) => {
            setTimeout(() => s.error(new Error('handler failed')));
          }),
      );
      await aFewTurns();
      expect(outcome).toEqual({ error: boom });
      expect(record.escaped).toEqual([]);
    });
  }

  it.each([
    ['NaN', Number.NaN],
    ['1.5', 1.5],
    ['-0.5', -0.5],
    ['a string', '0.5'],
  ])(
    'that returns %s (outside 0 to 1) is refused with a TypeError naming random, the value and the key',
    async (_, value) => {
      const outcome = await run(() => value as number);
      await aFewTurns();
      expect(outcome).toEqual({ error: expect.any(TypeError) });
      const message = ((outcome as { error: Error }).error as Error).message;
      expect(message).toContain('`random`');
      expect(message).toContain(typeof value === 'string' ? `'${value}'` : String(value));
      expect(message).toContain('for key a');
      expect(record.escaped).toEqual([]);
    },
  );
});

describe('a DispatchMetrics.onHandlerDuration listener that throws', () => {
  // Handlers are timed where they run, on event-loop lanes (thread lanes time none).
  it.each([
    [
      'throws',
      () => {
        throw new Error('listener threw');
      },
    ],
    ['rejects', async () => Promise.reject(new Error('listener rejected'))],
  ])(
    'never breaks settlement when it %s: every message settles, in-flight returns to 0',
    async (_, listener) => {
      const metrics = new DispatchMetrics({ sampleEvery: 1 });
      metrics.onHandlerDuration(listener);
      const executor = new KeyedExecutor({ lanes: 2 });
      try {
        const settled: number[] = [];
        const values = await within(
          lastValueFrom(
            fromIterable(messages(200), { onSettled: (m) => settled.push(m.n) }).pipe(
              keyedDispatch({
                executor,
                key: (m: Msg) => m.key,
                handle: async (m: Msg) => m.n,
                stats: metrics,
                maxInFlight: 64,
              }),
              toArray(),
            ),
          ),
          5_000,
          'the output',
        );
        await aFewTurns();
        expect(values).toHaveLength(200);
        expect(settled).toHaveLength(200);
        expect(metrics.snapshot().inFlight).toBe(0);
        expect(record.escaped).toEqual([]);
        expect(record.warnings).toEqual([expect.stringMatching(/onHandlerDuration/)]);
      } finally {
        await executor.close();
      }
    },
  );
});

describe('a DispatchRuntime component whose handler fails without a policy', () => {
  it('ends errored and the other components keep running', async () => {
    const boom = new Error('component a failed');
    const done: number[] = [];
    const runtime = new DispatchRuntime({
      executor: new KeyedExecutor({ lanes: 2 }),
      components: [
        dispatchComponent({
          name: 'a',
          source: fromIterable(messages(4)),
          dispatch: {
            key: (m: Msg) => m.key,
            handle: (m: Msg) => (m.n === 1 ? throwError(() => boom) : [m.n]),
          },
        }),
        dispatchComponent({
          name: 'b',
          source: fromIterable(messages(40, () => 'b')),
          dispatch: {
            key: (m: Msg) => m.key,
            handle: (m: Msg) => new Promise<number>((resolve) => setTimeout(() => resolve(m.n), 2)),
          },
          output: { next: (n) => done.push(n) },
        }),
      ],
    }).start();
    await waitFor(() => done.length === 40, 10_000, 'component b to finish its 40 messages');
    const report = await runtime.stopGracefully({ timeoutMs: 5_000 });
    expect(report.components.map((c) => [c.name, c.state])).toEqual([
      ['a', 'errored'],
      ['b', 'completed'],
    ]);
    expect(report.components[0]?.error).toBe(boom);
    expect(record.escaped).toEqual([]);
    expect(record.warnings).toEqual([expect.stringMatching(/'a'.*component a failed/)]);
  });
});

describe('PullSession.discard', () => {
  /** A receiver that hands over `items` at once, and discards what `matches` accepts at the first settlement. */
  function discarding(items: Msg[], matches: (m: Msg) => unknown) {
    class Session extends PullSession<Msg> {
      private readonly left = [...items];
      private discarded = false;
      protected override take() {
        return this.left.shift() ?? NOTHING_VALUE;
      }
      protected override acknowledge(): void {
        if (this.discarded) return;
        this.discarded = true;
        this.discard(matches as (m: Msg) => boolean);
        queueMicrotask(() => this.complete());
      }
    }
    return new (class extends Receiver<Msg> {
      [openReceiver](sink: ReceiverSink<Msg>): ReceiverSession<Msg> {
        return new Session(sink);
      }
    })();
  }

  it('refuses a matches that answers other than a boolean, with a TypeError naming it', async () => {
    const outcome = await outcomeOf(
      within(
        lastValueFrom(
          discarding(
            messages(8, () => 'a'),
            async () => false,
          ).pipe(
            keyedDispatch({ key: (m: Msg) => m.key, handle: (m: Msg) => Promise.resolve(m.n) }),
            toArray(),
          ),
        ),
        5_000,
        'the output',
      ),
    );
    expect(outcome).toEqual({ error: expect.any(TypeError) });
    expect(((outcome as { error: Error }).error as Error).message).toMatch(/`matches` returned a Promise/);
  });

  it('asks matches once per message in the batch router', async () => {
    const asked = new Map<number, number>();
    const matches = (m: Msg): boolean => {
      asked.set(m.n, (asked.get(m.n) ?? 0) + 1);
      return m.n % 2 === 0;
    };
    await outcomeOf(
      within(
        lastValueFrom(
          discarding(
            messages(12, () => 'a'),
            matches,
          ).pipe(
            keyedBatchDispatch({
              key: (m: Msg) => m.key,
              maxBatch: 2,
              handle: (batch: Msg[]) => Promise.resolve(batch.map((m) => m.n)),
            }),
            toArray(),
          ),
        ),
        5_000,
        'the output',
      ),
    );
    expect([...asked.values()].every((n) => n === 1)).toBe(true);
    expect(asked.size).toBeGreaterThan(0);
  });
});
