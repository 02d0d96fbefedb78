import Redis from 'ioredis';
import { DispatchStats, keyedDispatch, openReceiver } from 'keyed-dispatch';
import {
  fromRedisStreams,
  type RedisStreamMessage,
  type RedisStreamsOptions,
  StreamPartitions,
} from 'keyed-dispatch/redis';
import { DispatchRuntime, dispatchComponent } from 'keyed-dispatch/runtime';
import { firstValueFrom, lastValueFrom, type Subscription } from 'rxjs';
import { within } from '../kafka/broker';
import { buildFixture, ChildConsumer, startBroker } from '../support/brokers';
import { closeWhileRunning } from '../support/close-while-running';
import { deferred } from '../support/waits';
import { pendingByConsumer as pendingOf } from './support';

/** Stream names unique to this run, so reruns start clean. */
const RUN = `kd-spec-redis-${process.pid}-${Date.now()}`;
const GROUP = 'workers';

let redis: Redis;
let consumerScript: string;
const created: string[] = [];

beforeAll(async () => {
  startBroker('redis');
  redis = new Redis({ host: '127.0.0.1', port: 6379 });
  consumerScript = await buildFixture('redis-consumer');
}, 60_000);

afterAll(async () => {
  if (created.length > 0) await redis.del(...created);
  await redis.quit();
});

/** Publishes `perKey` messages to each of `keys` keys, interleaved; `data` is the message's number within its key. */
async function publish(partitions: StreamPartitions, keys: number, perKey: number): Promise<void> {
  created.push(...partitions.names());
  for (let n = 0; n < perKey; n++) {
    const batch = redis.pipeline();
    for (let k = 0; k < keys; k++) {
      const key = `k${k}`;
      batch.xadd(partitions.streamFor(key), '*', 'key', key, 'data', String(n));
    }
    await batch.exec();
  }
}

/** Entries pending per consumer of the group, over `streams`. */
function pendingByConsumer(streams: string[]): Promise<Map<string, number>> {
  return pendingOf(redis, streams, GROUP);
}

/** Checks that each key's messages arrive in publish order; counts every handled message. */
class OrderCheck {
  readonly handled = new Map<string, number>();
  readonly outOfOrder: string[] = [];
  private readonly last = new Map<string, number>();

  see(m: RedisStreamMessage): void {
    const n = Number(m.data);
    const previous = this.last.get(m.key) ?? -1;
    if (n !== previous + 1) this.outOfOrder.push(`${m.key}: ${n} after ${previous}`);
    this.last.set(m.key, n);
    const id = `${m.stream}/${m.id}`;
    this.handled.set(id, (this.handled.get(id) ?? 0) + 1);
  }
}

describe('fromRedisStreams', () => {
  it('handles 10,000 messages over 500 keys on two consumers: each acknowledged once, in key order, within the window', async () => {
    const partitions = new StreamPartitions(`${RUN}-bulk`, 4);
    await publish(partitions, 500, 20);
    const window = 64;
    const order = new OrderCheck();
    const acked = new Map<string, number>();
    const allAcked = deferred();
    let maxHeldAtHandler = 0;
    let maxPendingOnServer = 0;
    const subscriptions: Subscription[] = [];

    for (const index of [0, 1]) {
      const consumer = `c${index}`;
      const streams = partitions.assigned(index, 2);
      const stats = new DispatchStats();
      let started = 0;
      let settled = 0;
      const receiver = fromRedisStreams({
        redis,
        streams,
        group: GROUP,
        consumerName: consumer,
        onSettled: (m, outcome) => {
          expect(outcome).toBe('done');
          settled++;
          const id = `${m.stream}/${m.id}`;
          acked.set(id, (acked.get(id) ?? 0) + 1);
          if (acked.size === 10_000) allAcked.resolve();
        },
      });
      const sub = receiver
        .pipe(
          keyedDispatch({
            maxInFlight: window,
            stats,
            key: (m) => m.key,
            handle: async (m) => {
              order.see(m);
              started++;
              // Delivered and not yet acknowledged, as seen here: this handler's message included.
              maxHeldAtHandler = Math.max(maxHeldAtHandler, stats.snapshot().inFlight, started - settled);
              if (started % 100 === 0) {
                const pending = (await pendingByConsumer(streams)).get(consumer) ?? 0;
                maxPendingOnServer = Math.max(maxPendingOnServer, pending);
              }
              await new Promise((resolve) => setImmediate(resolve));
            },
          }),
        )
        .subscribe({ error: (err) => allAcked.reject(err) });
      subscriptions.push(sub);
    }

    await allAcked.promise;
    for (const sub of subscriptions) sub.unsubscribe();

    expect(order.outOfOrder).toEqual([]);
    expect(order.handled.size).toBe(10_000);
    expect([...order.handled.values()].every((n) => n === 1)).toBe(true);
    expect([...acked.values()].every((n) => n === 1)).toBe(true);
    expect(await pendingByConsumer(partitions.names())).toEqual(new Map());
    expect(maxHeldAtHandler).toBeLessThanOrEqual(window);
    expect(maxPendingOnServer).toBeGreaterThan(0);
    expect(maxPendingOnServer).toBeLessThanOrEqual(window);
  }, 60_000);

  it('recovers the pending entries of a consumer killed before acknowledging, in key order, and acknowledges each once', async () => {
    const partitions = new StreamPartitions(`${RUN}-recovery`, 2);
    await publish(partitions, 10, 10);
    const streams = partitions.names();
    const window = 20;

    const doomed = new ChildConsumer<{ id: string; stream: string; key: string }>(consumerScript, {
      streams,
      group: GROUP,
      consumerName: 'doomed',
      maxInFlight: window,
    });
    const held = await doomed.waitForLines(window);
    await doomed.kill();
    expect((await pendingByConsumer(streams)).get('doomed')).toBe(window);

    const order = new OrderCheck();
    const deliveryCounts = new Map<string, number>();
    const done = deferred();
    let settled = 0;
    const sub = fromRedisStreams({
      redis,
      streams,
      group: GROUP,
      consumerName: 'successor',
      claimMinIdleMs: 200,
      claimIntervalMs: 50,
      onSettled: () => {
        if (++settled === 100) done.resolve();
      },
    })
      .pipe(
        keyedDispatch({
          maxInFlight: 8,
          key: (m) => m.key,
          handle: (m) => {
            order.see(m);
            deliveryCounts.set(`${m.stream}/${m.id}`, m.deliveryCount);
            return [];
          },
        }),
      )
      .subscribe({ error: (err) => done.reject(err) });
    await done.promise;
    sub.unsubscribe();

    expect(order.outOfOrder).toEqual([]);
    expect(order.handled.size).toBe(100);
    expect([...order.handled.values()].every((n) => n === 1)).toBe(true);
    for (const entry of held) expect(deliveryCounts.get(`${entry.stream}/${entry.id}`)).toBe(2);
    expect([...deliveryCounts.values()].filter((n) => n === 1)).toHaveLength(100 - window);
    expect(await pendingByConsumer(streams)).toEqual(new Map());
  }, 30_000);
  it.each([
    [
      'redeliver',
      'leaves it pending, claimed and delivered again before its key goes on',
      1,
      { data: 'boom', deliveryCount: 2 },
    ],
    ['ack', 'acknowledges it', 0, { data: 'after', deliveryCount: 1 }],
  ] as const)(
    "onFailed '%s': a message whose handler failed is settled as failed, and the receiver %s",
    async (onFailed, _, pendingAfter, next) => {
      const partitions = new StreamPartitions(`${RUN}-failed-${onFailed}`, 1);
      created.push(...partitions.names());
      await partitions.publish(redis, 'k0', 'boom');
      await partitions.publish(redis, 'k0', 'after');
      const streams = partitions.names();
      const settled = deferred<string>();
      const options = {
        redis,
        streams,
        group: GROUP,
        consumerName: 'c',
        claimMinIdleMs: 100,
        claimIntervalMs: 20,
      };

      const failing = fromRedisStreams({
        ...options,
        onFailed,
        onSettled: (m, outcome) => settled.resolve(`${m.data}:${outcome}`),
      }).pipe(
        keyedDispatch({
          maxInFlight: 1,
          key: (m) => m.key,
          failurePolicy: 'error',
          handle: (m) => {
            if (m.data === 'boom') throw new Error('boom');
            return [];
          },
        }),
      );
      await expect(lastValueFrom(failing)).rejects.toThrow('boom');
      // Told once the failure reached the server (for an acknowledgement: once Redis answered the XACK).
      expect(await settled.promise).toBe('boom:failed');
      expect((await pendingByConsumer(streams)).get('c') ?? 0).toBe(pendingAfter);

      const after = fromRedisStreams(options).pipe(
        keyedDispatch({
          maxInFlight: 1,
          key: (m) => m.key,
          handle: (m) => [{ data: m.data, deliveryCount: m.deliveryCount }],
        }),
      );
      expect(await firstValueFrom(after)).toEqual(next);
    },
    30_000,
  );

  it('close() stops reading, lets running entries finish and be acknowledged, leaves queued ones pending, and completes', async () => {
    const partitions = new StreamPartitions(`${RUN}-close`, 1);
    await publish(partitions, 4, 5);
    const streams = partitions.names();
    const settled: string[] = [];
    const receiver = fromRedisStreams({
      redis,
      streams,
      group: GROUP,
      consumerName: 'closing',
      onSettled: (m) => settled.push(m.id),
    });
    const { handled, closed } = await closeWhileRunning(
      receiver,
      (m) => m.key,
      (m) => m.id,
    );

    // 8 admitted over 4 keys: the first of each ran and was acknowledged (its XACK answered before
    // close() resolved); the 4 queued behind them stay pending, to be claimed again.
    expect(handled.sort()).toEqual(settled.sort());
    expect(handled).toHaveLength(4);
    expect((await pendingByConsumer(streams)).get('closing')).toBe(4);
    expect(receiver.close()).toBe(closed);
  }, 30_000);

  it('holds only the stream of a hot key whose entries park, while the other streams keep flowing', async () => {
    const hotStream = `${RUN}-hot:hot`;
    const coldStream = `${RUN}-hot:cold`;
    created.push(hotStream, coldStream);
    const batch = redis.pipeline();
    for (let n = 0; n < 100; n++) {
      batch.xadd(hotStream, '*', 'key', 'hot', 'data', String(n));
      batch.xadd(coldStream, '*', 'key', `cold${n % 10}`, 'data', String(n));
    }
    await batch.exec();
    const gate = deferred();
    const hot: number[] = [];
    let cold = 0;
    const receiver = fromRedisStreams({
      redis,
      streams: [hotStream, coldStream],
      group: GROUP,
      consumerName: 'hot-key',
    });
    const stats = new DispatchStats();
    const subscription = receiver
      .pipe(
        keyedDispatch<RedisStreamMessage, string, void>({
          key: (m) => m.key,
          maxInFlight: 16,
          maxPerKey: 4,
          maxParked: 8,
          stats,
          handle: async (m) => {
            if (m.key !== 'hot') {
              cold++;
              return;
            }
            await gate.promise;
            hot.push(Number(m.data));
          },
        }),
      )
      .subscribe();
    // With only the parking bound, the hot stream's entries would fill the parking area and stop intake.
    const until = Date.now() + 10_000;
    while (cold < 100 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(cold).toBe(100);
    expect(hot).toEqual([]);
    expect(stats.snapshot().parked).toBeLessThanOrEqual(8);
    gate.resolve();
    while (hot.length < 100 && Date.now() < until + 10_000)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(hot).toEqual(Array.from({ length: 100 }, (_, n) => n));
    await receiver.close();
    subscription.unsubscribe();
  }, 40_000);

  /** Opens a session straight on the receiver's pull protocol and takes one entry from it. */
  async function deliveredOne(options: RedisStreamsOptions) {
    const delivered = deferred<RedisStreamMessage>();
    const session = fromRedisStreams(options)[openReceiver]({
      next: (m) => delivered.resolve(m),
      error: (err) => delivered.reject(err),
      complete: () => undefined,
      discard: () => [],
      settleFailed: (err) => delivered.reject(err),
    });
    session.request(1);
    return { session, message: await delivered.promise };
  }

  it('describes an entry by its stream, id and group, for errors about it', async () => {
    const stream = `${RUN}-describe`;
    created.push(stream);
    const id = await redis.xadd(stream, '*', 'key', 'k', 'data', 'd');
    const { session, message } = await deliveredOne({
      redis,
      streams: [stream],
      group: GROUP,
      consumerName: 'describer',
    });
    session.settle(message, 'done');
    await session.cancel();

    expect(session.describe?.(message)).toBe(`stream '${stream}' entry ${id} in group '${GROUP}'`);
  });

  it('acknowledges an entry its dead letter took, whatever onFailed says', async () => {
    const stream = `${RUN}-dead-lettered`;
    created.push(stream);
    await redis.xadd(stream, '*', 'key', 'k', 'data', 'poison');
    const { session, message } = await deliveredOne({
      redis,
      streams: [stream],
      group: GROUP,
      consumerName: 'dead-letterer',
      onFailed: 'redeliver',
    });
    session.settle(message, 'dead-lettered', new Error('poison'));
    // The close resolves once the acknowledgement has been answered.
    await session.cancel();

    expect(await pendingByConsumer([stream])).toEqual(new Map());
  });

  it('stopIntake stops reading and keeps acknowledging: an entry delivered before and settled after is acknowledged by the time cancel resolves', async () => {
    const stream = `${RUN}-stop-intake`;
    created.push(stream);
    await redis.xadd(stream, '*', 'key', 'k', 'data', 'first');
    const { session, message } = await deliveredOne({
      redis,
      streams: [stream],
      group: GROUP,
      consumerName: 'stopping-intake',
    });
    session.stopIntake?.();
    await redis.xadd(stream, '*', 'key', 'k', 'data', 'after the stop');
    session.settle(message, 'done');
    await session.cancel();

    expect(await pendingByConsumer([stream])).toEqual(new Map());
    // Not read: the entry after the stop is still new for the group.
    const [group] = (await redis.xinfo('GROUPS', stream)) as unknown[][];
    expect(group![group!.indexOf('last-delivered-id') + 1]).toBe(message.id);
  });

  it('a graceful runtime stop acknowledges every entry it drained: a new consumer of the group gets none of them again', async () => {
    const partitions = new StreamPartitions(`${RUN}-runtime-stop`, 1);
    await publish(partitions, 4, 10);
    const streams = partitions.names();
    const drained = new Set<string>();
    const windowFull = deferred();
    let admitted = 0;
    const runtime = new DispatchRuntime({
      components: [
        dispatchComponent({
          name: 'slow',
          source: fromRedisStreams({ redis, streams, group: GROUP, consumerName: 'stopping' }),
          dispatch: {
            maxInFlight: 8,
            key: (m: RedisStreamMessage) => {
              if (++admitted === 8) windowFull.resolve();
              return m.key;
            },
            handle: async (m: RedisStreamMessage) => {
              await new Promise((resolve) => setTimeout(resolve, 200));
              drained.add(m.id);
            },
          },
        }),
      ],
    }).start();
    // 4 running (one per key) and 4 queued behind them: a drain of 'all' runs the 8.
    await windowFull.promise;
    const report = await runtime.stopGracefully({ drain: 'all' });
    // Asked on a connection of its own, right after the stop: nothing drained may still be pending.
    const observer = new Redis({ host: '127.0.0.1', port: 6379 });
    const stillPending = (await observer.xpending(streams[0]!, GROUP, '-', '+', 100, 'stopping')) as Array<
      [string, string, number, number]
    >;
    await observer.quit();

    const again: string[] = [];
    let handled = 0;
    const successor = fromRedisStreams({
      redis,
      streams,
      group: GROUP,
      consumerName: 'after-stop',
      claimMinIdleMs: 0,
      claimIntervalMs: 20,
    });
    const sub = successor
      .pipe(
        keyedDispatch({
          key: (m) => m.key,
          handle: (m) => {
            handled++;
            if (drained.has(m.id)) again.push(m.id);
            return [];
          },
        }),
      )
      .subscribe();
    const allHandled = await within(10_000, () => handled === 40 - drained.size);
    sub.unsubscribe();

    expect(report.outcome).toBe('drained');
    expect(drained.size).toBe(8);
    expect(stillPending.filter(([id]) => drained.has(id))).toEqual([]);
    expect(allHandled).toBe(true);
    expect(again).toEqual([]);
  }, 30_000);

  it('rejects invalid options, naming the option, the value and its type, and still takes the earlier onFailed name', () => {
    const options = { redis, streams: ['s'], group: GROUP, consumerName: 'c' };
    expect(() => fromRedisStreams({ ...options, onFailed: 'drop' as never })).toThrow(
      "fromRedisStreams: expected `onFailed` to be 'redeliver' or 'ack', got 'drop' (string)",
    );
    expect(() => fromRedisStreams({ ...options, closeTimeoutMs: -1 })).toThrow(
      'fromRedisStreams: expected `closeTimeoutMs` to be an integer from 0 to 2147483647, got -1 (number)',
    );
    expect(() => fromRedisStreams({ ...options, maxUnreachableMs: 0 })).toThrow(
      'fromRedisStreams: expected `maxUnreachableMs` to be an integer from 1 to 2147483647, got 0 (number)',
    );
    expect(() => fromRedisStreams({ ...options, onTransportError: 'log' as never })).toThrow(
      "fromRedisStreams: expected `onTransportError` to be a function, got 'log' (string)",
    );
    // 0.x renames without aliases: the earlier name is refused like any unknown value.
    expect(() => fromRedisStreams({ ...options, onFailed: 'pending' as never })).toThrow(
      "fromRedisStreams: expected `onFailed` to be 'redeliver' or 'ack', got 'pending' (string)",
    );
    expect(() => fromRedisStreams({ ...options, consumer: 'c' } as never)).toThrow(
      /unknown option `consumer`/,
    );
  });
});
