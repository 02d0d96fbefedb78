import Redis from 'ioredis';
import { DispatchStats, keyedDispatch, TransportUnreachableError } from 'keyed-dispatch';
import { fromRedisStreams, type RedisStreamsOptions } from 'keyed-dispatch/redis';
import { within } from '../kafka/broker';
import { buildFixture, ChildConsumer } from '../support/brokers';
import { OwnRedis } from './support';

type Fault = Parameters<NonNullable<RedisStreamsOptions['onTransportError']>>[0];

/** A server of this spec's own, stopped and restarted under a running receiver. */
const server = new OwnRedis(6391);
const STREAM = `kd-spec-outage-${process.pid}-${Date.now()}`;

let redis: Redis;
let consumerScript: string;

beforeAll(async () => {
  consumerScript = await buildFixture('redis-consumer');
}, 60_000);

beforeEach(() => {
  server.start();
  // The application's own client: its errors are the application's to listen to, as with any ioredis client.
  // A short `disconnectTimeout`: a connection closed while Redis is down waits that long for its socket.
  redis = new Redis({ host: '127.0.0.1', port: server.port, disconnectTimeout: 100 });
  redis.on('error', () => undefined);
}, 30_000);

afterEach(() => {
  redis.disconnect();
  server.stop();
  server.forget();
}, 30_000);

describe('fromRedisStreams while its Redis goes away', () => {
  it('reports the outage through onTransportError, prints no unhandled error event, and goes on once Redis is back', async () => {
    const stream = `${STREAM}-back`;
    await redis.xadd(stream, '*', 'key', 'k', 'data', 'before');
    // In a process of its own: ioredis prints an unlistened connection error only where its errors are
    // instances of the process's own Error, which Jest's sandbox is not.
    const consumer = new ChildConsumer<{
      data?: string;
      fault?: string;
      receiver?: string;
      printed?: string;
    }>(consumerScript, {
      port: server.port,
      streams: [stream],
      group: 'g',
      consumerName: 'c',
      maxInFlight: 8,
    });
    const handled = () => consumer.lines.flatMap((line) => (line.data === undefined ? [] : [line.data]));
    try {
      expect(await within(10_000, () => handled().length === 1)).toBe(true);
      // Kept across the restart (the script's server saves nothing by itself): the stream and its group.
      await redis.save();
      server.stop();
      expect(await within(10_000, () => consumer.lines.some((line) => line.fault === 'connection'))).toBe(
        true,
      );
      server.start();
      await redis.xadd(stream, '*', 'key', 'k', 'data', 'after');
      expect(await within(15_000, () => handled().length === 2)).toBe(true);

      expect(handled()).toEqual(['before', 'after']);
      expect(consumer.lines.find((line) => line.fault !== undefined)).toEqual({
        fault: 'connection',
        receiver: 'fromRedisStreams()',
      });
      expect(consumer.lines.filter((line) => line.printed !== undefined)).toEqual([]);
    } finally {
      await consumer.kill();
    }
  }, 60_000);

  it('errors the output with a TransportUnreachableError once Redis has been unreachable for longer than maxUnreachableMs', async () => {
    const stream = `${STREAM}-gone`;
    await redis.xadd(stream, '*', 'key', 'k', 'data', 'before');
    const faults: Fault[] = [];
    let handled = 0;
    let outputError: unknown;
    const stats = new DispatchStats();
    const subscription = fromRedisStreams({
      redis,
      streams: [stream],
      group: 'g',
      consumerName: 'c',
      maxWaitMs: 100,
      maxUnreachableMs: 1000,
      onTransportError: (fault) => faults.push(fault),
    })
      .pipe(keyedDispatch({ stats, key: (m) => m.key, handle: () => [handled++] }))
      .subscribe({ error: (err) => (outputError = err) });
    try {
      expect(await within(10_000, () => handled === 1)).toBe(true);
      const stoppedAt = Date.now();
      server.stop();
      expect(await within(15_000, () => outputError !== undefined)).toBe(true);

      expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(1000);
      expect(outputError).toBeInstanceOf(TransportUnreachableError);
      expect(String((outputError as Error).message)).toContain('fromRedisStreams()');
      expect(faults.length).toBeGreaterThan(0);
      // Each one counted in the dispatcher's stats too.
      const counted = Object.values(stats.snapshot().transportFaults).reduce((sum, n) => sum + n, 0);
      expect(counted).toBe(faults.length);
    } finally {
      subscription.unsubscribe();
    }
  }, 60_000);
});
