import Redis from 'ioredis';
import {
  type AnyRuntimeComponent,
  DispatchMetrics,
  DispatchRuntime,
  DispatchStats,
  dispatchComponent,
  fromAsyncIterable,
  fromIterable,
  type KeyedBatchDispatchOptions,
  type KeyedDispatchOptions,
  KeyedExecutor,
  type KeyedExecutorOptions,
  keyedBatchDispatch,
  keyedDispatch,
  LocalBus,
  NOTHING,
  openReceiver,
  PullSession,
  Receiver,
  type ReceiverOptions,
  type ReceiverSession,
  type ReceiverSink,
  type RetryPolicyOptions,
  type RuntimeComponent,
  retryPolicy,
  ThreadExecutor,
  type ThreadExecutorOptions,
  type ThreadHandlerOptions,
  type TransportFault,
  threadHandler,
} from 'keyed-dispatch';
import type { KafkaReceiverOptions } from 'keyed-dispatch/kafka';
import type { JetStreamOptions } from 'keyed-dispatch/nats';
import { fromRedisStreams, type RedisStreamsOptions } from 'keyed-dispatch/redis';
import { lastValueFrom, type Observable, toArray } from 'rxjs';
import { FIXTURES, laneKinds, type Msg } from '../lanes/lane-kinds';
import { outcomeOf, within } from '../lanes/shared-state';
import { brokerAnswers } from '../support/broker-answers';
import { aFewTurns, recordEscapes } from '../support/escapes';

// Every function-typed public option, each made to throw and to reject: neither may become an unhandled
// rejection, an uncaught exception or a stuck message, and each failure lands where it is documented.
// The tables are typed against the options' keys, so a new function option fails to compile until it
// is listed here.

/** The keys of `O` whose value is (or may be) a function. */
type FunctionKeys<O> = {
  [P in keyof O]-?: [Extract<NonNullable<O[P]>, (...args: never[]) => unknown>] extends [never] ? never : P;
}[keyof O];

type Mode = 'throws' | 'rejects';

/** Where a callback's failure is documented to land. */
type Lands =
  /** The output errors (with the error, or a `TypeError` naming the callback's wrong answer). */
  | 'output'
  /** A process warning names it; the pipeline goes on and completes. */
  | 'warning'
  /** The output errors, or — when it came after the output completed — a process warning names it. */
  | 'output or warning'
  /** Its message fails like a handler error: with no policy, the output errors. */
  | 'message';

/** What a run showed: the output's outcome and what was left in flight. */
interface Observed {
  outcome: { value: unknown } | { error: unknown };
  inFlight: number;
}

interface Case {
  lands: Lands;
  /** The port of a broker the case needs: it runs where that broker answers (not in the floor run). */
  needs?: number;
  run(fail: Failing): Promise<Observed>;
}

/** A user function that throws `error`, or returns a promise rejecting with it; it fits any option. */
type Failing = () => (...args: any[]) => any;

const failing =
  (mode: Mode, error: Error): Failing =>
  () =>
  () => {
    if (mode === 'throws') throw error;
    return Promise.reject(error);
  };

const messages = (count: number): Msg[] => Array.from({ length: count }, (_, n) => ({ key: `k${n % 3}`, n }));
const BOUND_MS = 5_000;

/** Runs `source` through `operator` within the bound, with stats to read what is left in flight. */
async function observe(
  source: Observable<Msg>,
  dispatch: (stats: DispatchStats) => (source: Observable<Msg>) => Observable<unknown>,
): Promise<Observed> {
  const stats = new DispatchStats();
  const outcome = await outcomeOf(
    within(lastValueFrom(source.pipe(dispatch(stats), toArray())), BOUND_MS, 'the output to end'),
  );
  return { outcome, inFlight: stats.snapshot().inFlight };
}

const plain = { key: (m: Msg) => m.key, handle: (m: Msg) => [m.n] };

const dispatchCases = {
  key: {
    lands: 'message',
    run: (fail) =>
      observe(fromIterable(messages(6)), (stats) => keyedDispatch({ ...plain, key: fail(), stats })),
  },
  handle: {
    lands: 'message',
    run: (fail) =>
      observe(fromIterable(messages(6)), (stats) => keyedDispatch({ ...plain, handle: fail(), stats })),
  },
} satisfies Record<FunctionKeys<KeyedDispatchOptions<Msg, string, number>>, Case>;

const batchCases = {
  key: {
    lands: 'message',
    run: (fail) =>
      observe(fromIterable(messages(6)), (stats) =>
        keyedBatchDispatch({ key: fail(), handle: (b: Msg[]) => b.map((m) => m.n), stats }),
      ),
  },
  handle: {
    lands: 'message',
    run: (fail) =>
      observe(fromIterable(messages(6)), (stats) =>
        keyedBatchDispatch({ key: (m: Msg) => m.key, handle: fail(), stats }),
      ),
  },
} satisfies Record<FunctionKeys<KeyedBatchDispatchOptions<Msg, string, number>>, Case>;

/** A pipeline whose handler always rejects, under `retryPolicy(options)`. */
const underPolicy = (options: RetryPolicyOptions<Msg, string>) =>
  observe(fromIterable(messages(6)), (stats) =>
    keyedDispatch({
      ...plain,
      handle: async () => Promise.reject(new Error('handler failed')),
      failurePolicy: retryPolicy({ maxAttempts: 2, backoff: { initialMs: 1 }, ...options }),
      stats,
    }),
  );

const retryCases = {
  retryable: { lands: 'output', run: (fail) => underPolicy({ retryable: fail() }) },
  deadLetter: { lands: 'output', run: (fail) => underPolicy({ deadLetter: fail() }) },
  random: { lands: 'output', run: (fail) => underPolicy({ random: fail() }) },
  onFailure: { lands: 'warning', run: (fail) => underPolicy({ onFailure: fail() }) },
} satisfies Record<FunctionKeys<RetryPolicyOptions<Msg, string>>, Case>;

async function* generated(items: Msg[]): AsyncGenerator<Msg> {
  for (const m of items) yield m;
}

/** A bus that never completes on its own: the output is still open when a late onSettled fails. */
function overBus(options: ReceiverOptions<Msg>): Promise<Observed> {
  const bus = new LocalBus<Msg>();
  const observed = observe(bus.receive(options), (stats) => keyedDispatch({ ...plain, stats }));
  for (const m of messages(6)) bus.send(m);
  return observed;
}

const receiverCases = {
  'fromIterable onSettled': {
    lands: 'output or warning',
    run: (fail) =>
      observe(fromIterable(messages(6), { onSettled: fail() }), (stats) =>
        keyedDispatch({ ...plain, stats }),
      ),
  },
  'fromAsyncIterable onSettled': {
    lands: 'output or warning',
    run: (fail) =>
      observe(fromAsyncIterable(generated(messages(6)), { onSettled: fail() }), (stats) =>
        keyedDispatch({ ...plain, stats }),
      ),
  },
  'LocalBus onSettled': { lands: 'output', run: (fail) => overBus({ onSettled: fail() }) },
} satisfies Record<
  `${'fromIterable' | 'fromAsyncIterable' | 'LocalBus'} ${FunctionKeys<ReceiverOptions<Msg>>}`,
  Case
>;

const executorCases = {
  onLongTurn: {
    lands: 'warning',
    run: async (fail) => {
      const executor = new KeyedExecutor({ lanes: 2, longTurnMs: 1, onLongTurn: fail() });
      try {
        const busy = (m: Msg) => {
          const until = performance.now() + 3;
          while (performance.now() < until);
          return [m.n];
        };
        return await observe(fromIterable(messages(6)), (stats) =>
          keyedDispatch({ ...plain, executor, handle: busy, stats }),
        );
      } finally {
        await executor.close();
      }
    },
  },
} satisfies Record<FunctionKeys<KeyedExecutorOptions>, Case>;

const threadExecutorCases = {
  onLongTurn: {
    lands: 'warning',
    run: async (fail) => {
      const executor = new ThreadExecutor({ workers: 1, longTurnMs: 20, onLongTurn: fail() });
      try {
        const spinning = messages(3).map((m) => ({ ...m, spinMs: 100 }));
        return await observe(fromIterable(spinning), (stats) =>
          keyedDispatch({ ...plain, executor, handle: threadHandler<Msg, unknown>(FIXTURES, 'spin'), stats }),
        );
      } finally {
        await executor.close();
      }
    },
  },
} satisfies Record<FunctionKeys<ThreadExecutorOptions>, Case>;

const metricsCases = {
  onHandlerDuration: {
    lands: 'warning',
    run: async (fail) => {
      const metrics = new DispatchMetrics({ sampleEvery: 1 });
      metrics.onHandlerDuration(fail());
      const outcome = await outcomeOf(
        within(
          lastValueFrom(
            fromIterable(messages(30)).pipe(
              keyedDispatch({ ...plain, handle: async (m: Msg) => m.n, stats: metrics }),
              toArray(),
            ),
          ),
          BOUND_MS,
          'the output to end',
        ),
      );
      return { outcome, inFlight: metrics.snapshot().inFlight };
    },
  },
} satisfies Record<Extract<keyof DispatchMetrics, `on${string}`>, Case>;

/** Runs one component with `output` (its callbacks failing), lets it run, then stops the runtime. */
async function runtimeWith(output: RuntimeComponent<Msg, string, number>['output'], handle = plain.handle) {
  const stats = new DispatchStats();
  const component: AnyRuntimeComponent = dispatchComponent({
    name: 'c',
    source: fromIterable(messages(6)),
    dispatch: { ...plain, handle, stats },
    output,
  });
  const runtime = new DispatchRuntime({
    executor: new KeyedExecutor({ lanes: 2 }),
    components: [component],
  }).start();
  await aFewTurns(50);
  // Whatever it had not finished by now is drained by the stop: the report says how it ended.
  const report = await within(runtime.stopGracefully({ timeoutMs: 2_000 }), BOUND_MS, 'the runtime to stop');
  const state = report.components[0];
  const outcome = state?.state === 'errored' ? { error: state.error } : { value: state?.state };
  return { outcome, inFlight: stats.snapshot().inFlight };
}

const runtimeCases = {
  next: { lands: 'warning', run: (fail) => runtimeWith({ next: fail() }) },
  error: {
    lands: 'output',
    run: (fail) =>
      runtimeWith({ error: fail() }, (m: Msg) => {
        if (m.n === 0) throw new Error('component failed');
        return [m.n];
      }),
  },
  complete: { lands: 'warning', run: (fail) => runtimeWith({ complete: fail() }) },
} satisfies Record<
  FunctionKeys<Required<NonNullable<RuntimeComponent<Msg, string, number>['output']>>>,
  Case
>;

// Transport receivers: onSettled and onTransportError go through the same session core (PullSession's
// settle and transportFailed) on every transport. Redis runs here against the real server; Kafka and
// NATS are listed for completeness and share that path (their own specs run their brokers).
const REDIS_STREAM = `kd-spec-user-code-${process.pid}-${Date.now()}`;
let redisRun = 0;

async function overRedis(options: Partial<RedisStreamsOptions>, port = 6379): Promise<Observed> {
  const redis = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1, retryStrategy: () => 50 });
  redis.on('error', () => undefined);
  try {
    const stream = `${REDIS_STREAM}-${++redisRun}`;
    if (port === 6379)
      for (const m of messages(6)) await redis.xadd(stream, '*', 'key', m.key, 'data', String(m.n));
    const receiver = fromRedisStreams({
      redis,
      streams: [stream],
      group: 'g',
      consumerName: 'c',
      maxWaitMs: 50,
      maxUnreachableMs: 1_000,
      ...options,
    });
    const stats = new DispatchStats();
    const output = outcomeOf(
      within(
        lastValueFrom(
          receiver.pipe(keyedDispatch({ key: (m) => m.key, handle: (m) => [m.data], stats }), toArray()),
        ),
        BOUND_MS,
        'the output to end',
      ),
    );
    let ended = false;
    void output.then(() => {
      ended = true;
    });
    // A stream does not end: once everything settled (or the output ended), close it gracefully.
    const closer = (async () => {
      const until = Date.now() + BOUND_MS - 1_000;
      while (Date.now() < until && !ended && stats.snapshot().settled < 6) await aFewTurns(10);
      await receiver.close();
    })();
    const outcome = await output;
    await closer;
    return { outcome, inFlight: stats.snapshot().inFlight };
  } finally {
    redis.disconnect();
  }
}

/** A receiver whose transport fails once, recovers, delivers six messages and completes. */
function overFailingSession(onTransportError: (fault: TransportFault) => void): Promise<Observed> {
  class Session extends PullSession<Msg> {
    private readonly left = messages(6);
    constructor(sink: ReceiverSink<Msg>) {
      super(sink, undefined, { receiver: 'failingOnce()', onTransportError, maxUnreachableMs: 60_000 });
      this.transportFailed('fetch', new Error('fetch failed'));
      this.transportRecovered();
    }
    protected override take(): Msg | typeof NOTHING {
      const next = this.left.shift();
      if (next !== undefined) return next;
      queueMicrotask(() => this.complete());
      return NOTHING;
    }
  }
  const receiver = new (class extends Receiver<Msg> {
    [openReceiver](sink: ReceiverSink<Msg>): ReceiverSession<Msg> {
      return new Session(sink);
    }
  })();
  return observe(receiver, (stats) => keyedDispatch({ ...plain, stats }));
}

const transportCases = {
  'fromRedisStreams onSettled': {
    lands: 'output',
    needs: 6379,
    run: (fail) => overRedis({ onSettled: fail() }),
  },
  // Nothing listens on this port: every connection attempt fails and is reported.
  'fromRedisStreams onTransportError': {
    lands: 'warning',
    run: (fail) => overRedis({ onTransportError: fail() }, 6_399),
  },
  // Kafka and NATS: the same session core, reached without a broker (their own specs run the brokers).
  'KafkaReceiver onSettled': { lands: 'output', run: (fail) => overBus({ onSettled: fail() }) },
  'KafkaReceiver onTransportError': { lands: 'warning', run: (fail) => overFailingSession(fail()) },
  'fromJetStream onSettled': { lands: 'output', run: (fail) => overBus({ onSettled: fail() }) },
  'fromJetStream onTransportError': { lands: 'warning', run: (fail) => overFailingSession(fail()) },
} satisfies Record<
  | `fromRedisStreams ${FunctionKeys<RedisStreamsOptions>}`
  | `KafkaReceiver ${FunctionKeys<KafkaReceiverOptions>}`
  | `fromJetStream ${FunctionKeys<JetStreamOptions>}`,
  Case
>;

// `transfer` runs where a message is posted to its thread; a failure of it fails its message, on thread
// lanes only: run by the handle case on thread lanes below, with the other thread failures.
const threadHandlerCases = {
  transfer: {
    lands: 'message',
    run: async (fail) => {
      const lanes = laneKinds[1][1].executor(1);
      try {
        return await observe(fromIterable(messages(3)), (stats) =>
          keyedDispatch({
            ...plain,
            executor: lanes.executor,
            handle: threadHandler<Msg, unknown>(FIXTURES, 'echo', { transfer: fail() }),
            stats,
          }),
        );
      } finally {
        await lanes.close();
      }
    },
  },
} satisfies Record<FunctionKeys<ThreadHandlerOptions<Msg>>, Case>;

const entries: Array<[string, Record<string, Case>]> = [
  ['keyedDispatch', dispatchCases],
  ['keyedBatchDispatch', batchCases],
  ['retryPolicy', retryCases],
  ['receivers', receiverCases],
  ['KeyedExecutor', executorCases],
  ['ThreadExecutor', threadExecutorCases],
  ['threadHandler', threadHandlerCases],
  ['DispatchMetrics', metricsCases],
  ['DispatchRuntime component output', runtimeCases],
  ['transport receivers', transportCases],
];

let record: ReturnType<typeof recordEscapes>;
beforeEach(() => {
  record = recordEscapes();
});
afterEach(() => record.restore());

describe.each(entries.filter(([, cases]) => Object.keys(cases).length > 0))('%s', (_, cases) => {
  describe.each(Object.entries(cases))('%s', (_name, { lands, needs, run }) => {
    (needs === undefined || brokerAnswers(needs) ? it : it.skip).each<Mode>(['throws', 'rejects'])(
      'that %s never escapes, leaves nothing in flight and lands where documented',
      async (mode) => {
        const error = new Error(`user code ${mode}`);
        const { outcome, inFlight } = await run(failing(mode, error));
        await aFewTurns(50);
        expect(record.escaped).toEqual([]);
        const warned = record.warnings.some((w) => w.includes(error.message));
        const errored = 'error' in outcome;
        // A completed output settled everything; an errored one left what it held for redelivery.
        if (!errored) expect(inFlight).toBe(0);
        if (lands === 'warning') {
          expect(warned).toBe(true);
          // The pipeline goes on: it may still end for its own reasons (an unreachable server), never this error.
          if (errored) expect((outcome as { error: unknown }).error).not.toBe(error);
        } else if (lands === 'output or warning') {
          expect(errored || warned).toBe(true);
        } else {
          // 'output' and 'message' (no policy): the output errors, with the error or one naming the wrong answer.
          expect(outcome).toEqual({ error: expect.any(Error) });
        }
      },
    );
  });
});

describe.each(laneKinds)('handle on %s', (_, kind) => {
  it.each<Mode>(['throws', 'rejects'])(
    'that %s fails its message: the output errors, nothing escapes',
    async (mode) => {
      const lanes = kind.executor(2);
      try {
        const observed = await observe(
          fromIterable<Msg>([{ key: 'a', n: 1, async: mode === 'rejects' }]),
          (stats) =>
            keyedDispatch({ ...plain, executor: lanes.executor, handle: kind.handler('boom'), stats }),
        );
        await aFewTurns(50);
        // From a thread, the error is a copy made in this realm: matched by its message.
        expect(observed.outcome).toMatchObject({ error: { message: expect.stringMatching(/boom a/) } });
        expect(observed.inFlight).toBe(0);
        expect(record.escaped).toEqual([]);
      } finally {
        await lanes.close();
      }
    },
  );
});
