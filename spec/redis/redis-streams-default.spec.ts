import type Redis from 'ioredis';
import { DispatchStats, keyedDispatch } from 'keyed-dispatch';
import { fromRedisStreams, type RedisStreamMessage } from 'keyed-dispatch/redis';
import { within } from '../kafka/broker';
import { within as timed } from '../lanes/shared-state';
import { pendingByConsumer, useSharedRedis } from './support';

const GROUP = 'workers';

const shared = useSharedRedis('kd-spec-redis-default');
let redis: Redis;
beforeAll(() => {
  redis = shared.redis;
});

afterEach(() => jest.restoreAllMocks());

describe('fromRedisStreams with no failure policy', () => {
  it("retries an entry whose handler fails in its key's mailbox, pending while it fails, while every other key's entries complete", async () => {
    const stream = shared.stream('poison');
    const poisonId = await redis.xadd(stream, '*', 'key', 'poison', 'data', 'p');
    for (let i = 0; i < 30; i++) await redis.xadd(stream, '*', 'key', `k${i % 5}`, 'data', String(i));
    const logged: string[] = [];
    jest.spyOn(console, 'error').mockImplementation((text: unknown) => {
      logged.push(String(text));
    });
    // Whether the poison entry was still pending, unacknowledged, at each of its failures.
    const pendingAtFailure: boolean[] = [];
    let attempts = 0;
    const stats = new DispatchStats();

    // Told once each entry's acknowledgement is confirmed (or, for a failure, once it is left pending).
    const settled: string[] = [];
    let allSettled = (): void => undefined;
    let failed = (_err: unknown): void => undefined;
    const settledAll = new Promise<void>((resolve, reject) => {
      allSettled = resolve;
      failed = reject;
    });
    const handled: string[] = [];
    const subscription = fromRedisStreams({
      redis,
      streams: [stream],
      group: GROUP,
      consumerName: 'c',
      onSettled: (m, outcome) => {
        settled.push(`${m.id} ${outcome}`);
        if (settled.length === 31) allSettled();
      },
    })
      .pipe(
        keyedDispatch({
          key: (m: RedisStreamMessage) => m.key,
          stats,
          handle: async (m) => {
            if (m.key === 'poison' && ++attempts <= 2) {
              const pending = (await redis.xpending(stream, GROUP, '-', '+', 100)) as Array<[string]>;
              pendingAtFailure.push(pending.some(([id]) => id === poisonId));
              throw new Error(`attempt ${attempts} failed`);
            }
            return m.id;
          },
        }),
      )
      .subscribe({ next: (id) => handled.push(id), error: (err) => failed(err) });
    try {
      // Rejects if the output errors.
      await timed(settledAll, 20_000, 'every entry to settle');
    } finally {
      subscription.unsubscribe();
    }

    expect(settled).toHaveLength(31);
    expect(settled.every((s) => s.endsWith(' done'))).toBe(true);
    expect(settled.at(-1)).toBe(`${poisonId} done`);
    expect(handled).toHaveLength(31);
    expect(new Set(handled).size).toBe(31);
    // Every other key went on while the poison entry waited out its backoff: it was handled last.
    expect(handled.at(-1)).toBe(poisonId);
    expect(attempts).toBe(3);
    expect(pendingAtFailure).toEqual([true, true]);
    expect(logged).toHaveLength(2);
    for (const [i, text] of logged.entries()) {
      expect(text).toContain(
        `attempt ${i + 1} at the message of key poison of stream '${stream}' entry ${poisonId}`,
      );
    }
    expect(stats.snapshot()).toMatchObject({ failedAttempts: 2, failed: 0 });
    // Acknowledged once handled: nothing is left pending for the group.
    expect(
      await within(10_000, async () => (await pendingByConsumer(redis, [stream], GROUP)).size === 0),
    ).toBe(true);
  }, 30_000);
});
