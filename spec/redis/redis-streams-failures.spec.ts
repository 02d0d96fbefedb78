import type Redis from 'ioredis';
import { DispatchStats, keyedDispatch, MessageError, retryPolicy } from 'keyed-dispatch';
import { fromRedisStreams, type RedisStreamMessage } from 'keyed-dispatch/redis';
import { firstValueFrom, lastValueFrom } from 'rxjs';
import { within } from '../kafka/broker';
import { pendingByConsumer, useSharedRedis } from './support';

const GROUP = 'workers';

const shared = useSharedRedis('kd-spec-redis-failures');
let redis: Redis;
beforeAll(() => {
  redis = shared.redis;
});

/** A stream of this run with `data` entries, all of key `k`; returns its name. */
async function streamOf(name: string, ...data: string[]): Promise<string> {
  const stream = shared.stream(name);
  for (const d of data) await redis.xadd(stream, '*', 'key', 'k', 'data', d);
  return stream;
}

/** The account of an entry whose data is JSON: a key selector that throws on a malformed entry. */
const account = (m: RedisStreamMessage): string => JSON.parse(m.data).account;

describe('fromRedisStreams with an entry whose key selector throws', () => {
  it.each(['redeliver', 'ack'] as const)(
    "onFailed '%s', failurePolicy 'error': the output errors with a MessageError naming its stream and id, and the entry stays pending, claimable",
    async (onFailed) => {
      const stream = await streamOf(`key-throws-${onFailed}`);
      const id = await redis.xadd(stream, '*', 'data', 'not json');
      const options = { redis, streams: [stream], group: GROUP, consumerName: 'c' };

      const error = await lastValueFrom(
        fromRedisStreams({ ...options, onFailed }).pipe(
          keyedDispatch({ key: account, handle: () => [], failurePolicy: 'error' }),
        ),
      ).catch((err: unknown) => err);

      expect(error).toBeInstanceOf(MessageError);
      expect(error).toMatchObject({
        key: undefined,
        source: `stream '${stream}' entry ${id} in group '${GROUP}'`,
      });
      expect((error as MessageError).cause).toMatchObject({ name: 'SyntaxError' });
      expect(await pendingByConsumer(redis, [stream], GROUP)).toEqual(new Map([['c', 1]]));
      const claimed = await firstValueFrom(
        fromRedisStreams({ ...options, consumerName: 'successor', claimMinIdleMs: 0 }).pipe(
          keyedDispatch({ key: (m) => m.id, handle: (m) => [{ id: m.id, deliveryCount: m.deliveryCount }] }),
        ),
      );
      expect(claimed).toEqual({ id, deliveryCount: 2 });
    },
    30_000,
  );

  it('with a dead letter: the dead letter gets the entry, with no key, the entry is acknowledged as dead-lettered and the stats keep it as the last failure, with its stream and id', async () => {
    const stream = await streamOf('key-throws-dead-letter');
    const id = await redis.xadd(stream, '*', 'data', 'not json');
    const stats = new DispatchStats();
    await redis.xadd(stream, '*', 'data', JSON.stringify({ account: 'a' }));
    const deadLetters: Array<{ data: string; key: unknown; error: string }> = [];
    const outcomes: string[] = [];
    const handled: string[] = [];
    const receiver = fromRedisStreams({
      redis,
      streams: [stream],
      group: GROUP,
      consumerName: 'c',
      onSettled: (m, outcome) => outcomes.push(`${m.data}:${outcome}`),
    });
    const subscription = receiver
      .pipe(
        keyedDispatch({
          stats,
          key: account,
          handle: (m) => [handled.push(m.data)],
          failurePolicy: retryPolicy<RedisStreamMessage, string>({
            deadLetter: (m, error, context) => {
              deadLetters.push({ data: m.data, key: context.key, error: (error as Error).name });
            },
          }),
        }),
      )
      .subscribe();
    try {
      expect(await within(10_000, () => outcomes.length === 2)).toBe(true);

      expect(deadLetters).toEqual([{ data: 'not json', key: undefined, error: 'SyntaxError' }]);
      expect(handled).toEqual(['{"account":"a"}']);
      expect(outcomes).toEqual(['not json:dead-lettered', '{"account":"a"}:done']);
      expect(await pendingByConsumer(redis, [stream], GROUP)).toEqual(new Map());
      expect(stats.snapshot()).toMatchObject({ failed: 1, deadLettered: 1 });
      expect(stats.snapshot().lastFailure).toMatchObject({
        key: undefined,
        source: `stream '${stream}' entry ${id} in group '${GROUP}'`,
        outcome: 'dead-lettered',
        error: { name: 'SyntaxError' },
      });
    } finally {
      await receiver.close();
      subscription.unsubscribe();
    }
  }, 30_000);
});

describe('fromRedisStreams with entries that keep failing', () => {
  it('a consumer taking over a stream with more failing entries pending than its window redelivers each of them and still reads new entries', async () => {
    const stream = await streamOf('poison', 'poison-1', 'poison-2');
    // A policy without a dead letter gives up: the entry is settled failed and, by default, left pending.
    const failing = retryPolicy<RedisStreamMessage, string>({ maxAttempts: 1 });
    const handle = (m: RedisStreamMessage) => {
      if (m.data.startsWith('poison')) throw new Error(`${m.data} cannot be handled`);
      return [m.data];
    };
    let failed = 0;
    const first = fromRedisStreams({
      redis,
      streams: [stream],
      group: GROUP,
      consumerName: 'first',
      onSettled: (_m, outcome) => {
        if (outcome === 'failed') failed++;
      },
    });
    const firstRun = first
      .pipe(keyedDispatch({ maxInFlight: 1, key: (m) => m.key, handle, failurePolicy: failing }))
      .subscribe();
    expect(await within(10_000, () => failed === 2)).toBe(true);
    await first.close();
    firstRun.unsubscribe();

    const redelivered: string[] = [];
    const handled: string[] = [];
    const successor = fromRedisStreams({
      redis,
      streams: [stream],
      group: GROUP,
      consumerName: 'successor',
      claimMinIdleMs: 100,
      claimIntervalMs: 20,
      onSettled: (m, outcome) => {
        if (outcome === 'failed') redelivered.push(m.data);
      },
    });
    const output = lastValueFrom(
      successor.pipe(
        keyedDispatch({
          maxInFlight: 1,
          key: (m) => m.key,
          handle: (m: RedisStreamMessage) => {
            const out = handle(m);
            handled.push(m.data);
            return out;
          },
          failurePolicy: failing,
        }),
      ),
      { defaultValue: undefined },
    );
    await redis.xadd(stream, '*', 'key', 'k', 'data', 'after');
    const readOn = await within(10_000, () => handled.includes('after'));
    await successor.close();
    await output;

    expect(redelivered).toEqual(expect.arrayContaining(['poison-1', 'poison-2']));
    expect(readOn).toBe(true);
  }, 30_000);
});
