import { DispatchStats, keyedDispatch } from 'keyed-dispatch';
import { fromRedisStreams, type RedisStreamMessage } from 'keyed-dispatch/redis';
import { lastValueFrom } from 'rxjs';
import { within } from '../kafka/broker';
import { deferred } from '../support/waits';
import { useSharedRedis } from './support';

const GROUP = 'workers';
const shared = useSharedRedis('kd-spec-redis-lag');

describe('fromRedisStreams lag', () => {
  it("reads the group's entries not finished on each stream — not yet delivered plus pending — within lagIntervalMs", async () => {
    const { redis } = shared;
    const streams = [shared.stream('a'), shared.stream('b')];
    const ids: Record<string, string[]> = { [streams[0]]: [], [streams[1]]: [] };
    for (let i = 0; i < 20; i++)
      ids[streams[0]].push(String(await redis.xadd(streams[0], '*', 'key', 'a', 'n', i)));
    for (let i = 0; i < 5; i++)
      ids[streams[1]].push(String(await redis.xadd(streams[1], '*', 'key', 'b', 'n', i)));
    const stats = new DispatchStats();
    const gate = deferred();
    const receiver = fromRedisStreams({ redis, streams, group: GROUP, consumerName: 'c', lagIntervalMs: 50 });
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch({
          key: (m: RedisStreamMessage) => m.key,
          // A window smaller than stream a: some of its entries stay undelivered, the others pending.
          maxInFlight: 8,
          stats,
          handle: async (m) => {
            // a's entries from the 5th on wait; b's all finish.
            if (m.key === 'a' && Number(m.fields.n) >= 4) await gate.promise;
          },
        }),
      ),
      { defaultValue: undefined },
    );
    const lagOf = (stream: string) => stats.snapshot().transportLag.find((l) => l.source === stream);
    try {
      expect(await within(10_000, () => lagOf(streams[0])?.lag === 16 && lagOf(streams[1])?.lag === 0)).toBe(
        true,
      );
      expect(lagOf(streams[0])).toEqual({
        transport: 'redis',
        source: streams[0],
        partition: null,
        consumer: GROUP,
        lag: 16,
        committed: expect.any(String),
        at: expect.any(Number),
      });
      // Delivered as far as the window let it: past the finished ones, short of the last.
      expect(ids[streams[0]].indexOf(lagOf(streams[0])!.committed!)).toBeGreaterThanOrEqual(4);
      expect(lagOf(streams[0])!.committed).not.toBe(ids[streams[0]][19]);
      expect(lagOf(streams[1])!.committed).toBe(ids[streams[1]][4]);

      gate.resolve();
      expect(await within(10_000, () => lagOf(streams[0])?.lag === 0)).toBe(true);
      expect(lagOf(streams[0])!.committed).toBe(ids[streams[0]][19]);
    } finally {
      gate.resolve();
      await receiver.close();
      await output;
    }
  });
});
