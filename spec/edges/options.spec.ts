import {
  DispatchMetrics,
  DispatchRuntime,
  fromAsyncIterable,
  fromIterable,
  KeyedExecutor,
  keyedDispatch,
  LocalBus,
  retryPolicy,
  ThreadExecutor,
} from 'keyed-dispatch';
import { serveDashboard } from 'keyed-dispatch/dashboard';
import { deadLetterToTopic, fromKafka, fromPlatformaticKafka, keyedProducer } from 'keyed-dispatch/kafka';
import { fromJetStream } from 'keyed-dispatch/nats';
import { exportToOpenTelemetry } from 'keyed-dispatch/otel';
import { exportToPrometheus } from 'keyed-dispatch/prometheus';
import { fromRedisStreams } from 'keyed-dispatch/redis';
import { Subject } from 'rxjs';

const handle = (n: number) => [n];
const key = (n: number) => n;

describe('option validation', () => {
  it.each([
    ['an empty object', {}],
    ['a string', 'x'],
  ])('rejects `executor` as %s when keyedDispatch is called, naming the option', (_what, executor) => {
    expect(() => keyedDispatch({ key, handle, executor: executor as never })).toThrow(
      /keyedDispatch: expected `executor` to be a KeyedExecutor or a ThreadExecutor, got/,
    );
  });

  it('rejects `stats` that is not a DispatchStats when keyedDispatch is called', () => {
    expect(() => keyedDispatch({ key, handle, stats: 5 as never })).toThrow(
      'keyedDispatch: expected `stats` to be a DispatchStats or DispatchMetrics, got 5 (number)',
    );
  });

  it.each([
    ['keyedDispatch', 'onFailure', () => keyedDispatch({ key, handle, onFailure: retryPolicy() } as never)],
    ['keyedDispatch', 'maxInflight', () => keyedDispatch({ key, handle, maxInflight: 4096 } as never)],
    [
      'keyedDispatch',
      'metrics',
      () => keyedDispatch({ key, handle, metrics: new DispatchMetrics() } as never),
    ],
    ['KeyedExecutor', 'workers', () => new KeyedExecutor({ workers: 2 } as never)],
    ['ThreadExecutor', 'threads', () => new ThreadExecutor({ threads: 2 } as never)],
    ['DispatchMetrics', 'hotkeys', () => new DispatchMetrics({ hotkeys: 5 } as never)],
    ['retryPolicy', 'attempts', () => retryPolicy({ attempts: 5 } as never)],
    ['LocalBus', 'capacity', () => new LocalBus({ capacity: 5 } as never)],
    ['DispatchRuntime', 'component', () => new DispatchRuntime({ component: [] } as never)],
  ])(
    '%s rejects `%s`, an option it does not have, instead of ignoring it and taking the defaults',
    (owner, name, make) => {
      expect(make).toThrow(`${owner}: unknown option \`${name}\``);
    },
  );

  it.each([
    ['fromKafka', 'commitEvery', () => fromKafka({ consumer: {}, topics: ['t'], commitEvery: 5 } as never)],
    [
      'fromPlatformaticKafka',
      'groupId',
      () => fromPlatformaticKafka({ consumer: {}, topics: ['t'], groupId: 'g' } as never),
    ],
    [
      'fromRedisStreams',
      'blockMS',
      () =>
        fromRedisStreams({ redis: {}, streams: ['s'], group: 'g', consumerName: 'c', blockMS: 5 } as never),
    ],
    ['fromJetStream', 'expires', () => fromJetStream({ consumer: {}, expires: 5 } as never)],
    [
      'exportToPrometheus',
      'prefx',
      () =>
        exportToPrometheus(
          new DispatchMetrics(),
          { registerMetric: () => undefined } as never,
          { prefx: 'x' } as never,
        ),
    ],
  ])('%s rejects `%s`, an option it does not have', (owner, name, make) => {
    expect(make).toThrow(`${owner}: unknown option \`${name}\``);
  });

  it.each([
    ['fromIterable', 'onSetled', () => fromIterable([1], { onSetled: () => undefined } as never)],
    ['fromAsyncIterable', 'ack', () => fromAsyncIterable((async function* () {})(), { ack: true } as never)],
    ['LocalBus.receive', 'group', () => new LocalBus().receive({ group: 'g' } as never)],
    [
      'exportToOpenTelemetry',
      'labels',
      () =>
        exportToOpenTelemetry(
          new DispatchMetrics(),
          { createObservableGauge: () => undefined } as never,
          {
            labels: {},
          } as never,
        ),
    ],
    [
      'keyedProducer',
      'partitioner',
      () => keyedProducer({} as never, { topic: 't', key, partitioner: 1 } as never),
    ],
    ['deadLetterToTopic', 'headers', () => deadLetterToTopic({} as never, 't', { headers: {} } as never)],
  ])('%s rejects `%s`, an option it does not have, when called', (owner, name, make) => {
    expect(make).toThrow(`${owner}: unknown option \`${name}\``);
  });

  it.each([
    ['both', { kafka: {}, group: { groupId: 'g' }, consumer: {} }, 'got both'],
    ['neither', {}, 'got neither'],
  ])('fromKafka refuses %s of `kafka` and `consumer`, naming them', (_what, client, got) => {
    expect(() => fromKafka({ ...client, topics: ['t'] } as never)).toThrow(
      `fromKafka: expected one of \`kafka\` (a kafkajs Kafka client, with \`group\`) or \`consumer\` (a kafkajs Consumer), ${got}`,
    );
  });

  it.each([
    [
      'a producer without `send`',
      () => deadLetterToTopic({} as never, 't'),
      '`producer` to be a kafkajs or @platformatic/kafka producer (with a `send` method), got an object (object)',
    ],
    [
      'an empty topic',
      () => deadLetterToTopic({ send: async () => {} }, ''),
      "`topic` to be a non-empty string, got '' (string)",
    ],
    [
      '`maxErrorLength` 0',
      () => deadLetterToTopic({ send: async () => {} }, 't', { maxErrorLength: 0 }),
      '`maxErrorLength`',
    ],
    [
      'a producer that is a number',
      () => keyedProducer(1 as never, { topic: 't', key: String }),
      'keyedProducer: expected `producer`',
    ],
  ])('deadLetterToTopic and keyedProducer refuse %s when called, naming it', (_what, make, message) => {
    expect(make).toThrow(message);
  });

  it('fromKafka refuses a `kafka` client without a `group` naming its `groupId`', () => {
    const kafka = { consumer: () => ({}), admin: () => ({}) };
    expect(() => fromKafka({ kafka, topics: ['t'] } as never)).toThrow(
      'fromKafka: expected `group` to be a kafkajs consumer config with a string `groupId`, got undefined',
    );
  });

  it('fromIterable rejects an `onSettled` that is not a function when called, not once a message settles', () => {
    expect(() => fromIterable([1], { onSettled: 'log' as never })).toThrow(
      "fromIterable: expected `onSettled` to be a function, got 'log' (string)",
    );
  });

  it('serveDashboard rejects an option it does not have, before listening', async () => {
    await expect(serveDashboard({ sources: new DispatchMetrics(), prot: 8080 } as never)).rejects.toThrow(
      'serveDashboard: unknown option `prot`',
    );
  });

  it('refuses an unknown option of stopGracefully before stopping anything', async () => {
    const runtime = new DispatchRuntime({
      components: [{ name: 'orders', source: fromIterable([1]), dispatch: { key, handle } }],
    });
    expect(() => runtime.stopGracefully({ deadline: 10 } as never)).toThrow(
      'stopGracefully: unknown option `deadline`',
    );
    await runtime.stopGracefully();
  });

  it('names the unknown field of a runtime component', () => {
    expect(
      () =>
        new DispatchRuntime({
          components: [
            { name: 'orders', source: fromIterable([1]), dispatch: { key, handle }, onError: 1 } as never,
          ],
        }),
    ).toThrow("DispatchRuntime: components[0] ('orders'): unknown option `onError`");
  });

  it('names the unknown option of a runtime component, whose dispatch options keyedDispatch checks', () => {
    expect(
      () =>
        new DispatchRuntime({
          components: [
            { name: 'orders', source: fromIterable([1]), dispatch: { key, handle, maxInflight: 8 } as never },
          ],
        }),
    ).toThrow("DispatchRuntime: components[0] ('orders').dispatch: unknown option `maxInflight`");
  });

  it('rejects `onOverflow: null` instead of taking the default', () => {
    expect(() => keyedDispatch({ key, handle, onOverflow: null as never })).toThrow(
      "keyedDispatch: expected `onOverflow` to be 'buffer' or 'error', got null",
    );
  });

  it.each([
    ['KeyedExecutor', () => new KeyedExecutor({ lanes: 2 ** 32 }), 'lanes'],
    ['ThreadExecutor', () => new ThreadExecutor({ workers: 2 ** 32 }), 'workers'],
  ])('names the lane count option when a %s is asked for 2 ** 32 lanes', (name, build, option) => {
    expect(build).toThrow(
      `${name}: expected \`${option}\` to be an integer from 1 to 1024, got 4294967296 (number)`,
    );
  });

  it.each([
    ['a number', 5, '5 (number)'],
    ['null', null, 'null'],
  ])('rejects a `backoff` of %s in retryPolicy', (_what, backoff, shown) => {
    expect(() => retryPolicy({ backoff: backoff as never })).toThrow(
      `retryPolicy: expected \`backoff\` to be an options object, got ${shown}`,
    );
  });

  it('rejects negative `resourceLimits` of a ThreadExecutor, naming the field', () => {
    expect(() => new ThreadExecutor({ resourceLimits: { maxOldGenerationSizeMb: -1 } })).toThrow(
      'ThreadExecutor: expected `resourceLimits.maxOldGenerationSizeMb` to be a number >= 16 (the least a thread safely starts with), got -1 (number)',
    );
  });

  it('rejects a runtime component without a `source` at construction, naming the component', () => {
    expect(
      () =>
        new DispatchRuntime({
          components: [{ name: 'orders', source: undefined as never, dispatch: { key, handle } }],
        }),
    ).toThrow(
      "DispatchRuntime: components[0] ('orders'): expected `source` to be an Observable or a receiver, got undefined",
    );
  });

  it('rejects a runtime executor of another kind at construction', () => {
    expect(
      () =>
        new DispatchRuntime({
          executor: {} as never,
          components: [{ name: 'a', source: fromIterable([1]), dispatch: { key, handle } }],
        }),
    ).toThrow(
      'DispatchRuntime: expected `executor` to be a KeyedExecutor or a ThreadExecutor, got an object (object)',
    );
  });
});

describe('durations', () => {
  const tooLong = 2 ** 31;

  it('rejects a stop timeout longer than a timer can wait, instead of cutting the work after a millisecond', async () => {
    const runtime = new DispatchRuntime({
      components: [{ name: 'a', source: new Subject<number>(), dispatch: { key, handle } }],
    }).start();
    expect(() => runtime.stopGracefully({ timeoutMs: 2 ** 32 })).toThrow(
      'stopGracefully: expected `timeoutMs` to be an integer from 0 to 2147483647, got 4294967296 (number)',
    );
    expect(() => runtime.stopGracefully({ quietPeriodMs: tooLong })).toThrow(
      /`quietPeriodMs` to be an integer from 0 to 2147483647/,
    );
    await runtime.forceStop();
  });

  it.each([
    ['initialMs', { initialMs: tooLong }],
    ['maxMs', { maxMs: tooLong }],
  ])(
    'rejects a backoff `%s` longer than a timer can wait, instead of retrying after a millisecond',
    (name, backoff) => {
      expect(() => retryPolicy({ backoff })).toThrow(`\`backoff.${name}\` to be a number between`);
    },
  );

  it('rejects a metrics period longer than a timer can wait', () => {
    expect(() => new DispatchMetrics().snapshots(tooLong)).toThrow(
      'DispatchMetrics.snapshots: expected `periodMs` to be an integer from 1 to 2147483647, got 2147483648 (number)',
    );
  });

  it('accepts the longest duration a timer can wait', () => {
    expect(() => retryPolicy({ backoff: { initialMs: 2 ** 31 - 1 } })).not.toThrow();
  });
});
