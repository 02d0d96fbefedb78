import Redis from 'ioredis';
import { DispatchStats, keyedDispatch, TransportUnreachableError } from 'keyed-dispatch';
import { fromRedisStreams, type RedisStreamMessage, type RedisStreamsOptions } from 'keyed-dispatch/redis';
import { within } from '../kafka/broker';
import { deferred } from '../support/waits';
import { PausableRedis } from './support';

type Fault = Parameters<NonNullable<RedisStreamsOptions['onTransportError']>>[0];

const STREAM = 'orders';
const GROUP = 'g';

let server: PausableRedis;
/** The receiver's command connection. */
let redis: Redis;
/** The producer's own connection. */
let producer: Redis;

beforeEach(async () => {
  server = await PausableRedis.start();
  redis = new Redis({ host: '127.0.0.1', port: server.port });
  producer = new Redis({ host: '127.0.0.1', port: server.port });
  for (const client of [redis, producer]) client.on('error', () => undefined);
}, 30_000);

afterEach(() => {
  redis?.disconnect();
  producer?.disconnect();
  server?.stop();
});

/** Adds one entry per `data`, of key `key`; resolves once Redis has them (after a pause: once it resumes). */
async function add(key: string, ...data: string[]): Promise<void> {
  for (const d of data) await producer.xadd(STREAM, '*', 'key', key, 'data', d);
}

/** The entries pending in the group (delivered and not acknowledged). */
async function pending(): Promise<number> {
  const [count] = (await redis.xpending(STREAM, GROUP)) as [number];
  return count;
}

describe('fromRedisStreams with a Redis that stops answering without closing its connections', () => {
  it('reports it as a fault and errors the output with a TransportUnreachableError past maxUnreachableMs, with the default commandTimeoutMs', async () => {
    await add('k', 'before');
    const faults: Fault[] = [];
    const stats = new DispatchStats();
    let handled = 0;
    let outputError: unknown;
    const maxWaitMs = 200;
    const maxUnreachableMs = 3000;
    const subscription = fromRedisStreams({
      redis,
      streams: [STREAM],
      group: GROUP,
      consumerName: 'c',
      maxWaitMs,
      maxUnreachableMs,
      onTransportError: (fault) => faults.push(fault),
    })
      .pipe(keyedDispatch({ stats, key: (m) => m.key, handle: () => [handled++] }))
      .subscribe({ error: (err) => (outputError = err) });
    try {
      expect(await within(10_000, () => handled === 1)).toBe(true);
      const pausedAt = Date.now();
      server.pause();
      // Noticed once a command is unanswered for maxWaitMs (a blocking read's own wait) and the 5 s
      // default of commandTimeoutMs; given up maxUnreachableMs after that. Plus a margin for a loaded machine.
      const bound = maxWaitMs + 5000 + maxUnreachableMs;
      expect(await within(bound + 5000, () => outputError !== undefined)).toBe(true);

      expect(Date.now() - pausedAt).toBeGreaterThanOrEqual(maxUnreachableMs);
      expect(outputError).toBeInstanceOf(TransportUnreachableError);
      expect(String((outputError as Error).message)).toContain('fromRedisStreams()');
      expect(String((outputError as Error).message)).toContain('commandTimeoutMs');
      expect(faults[0]).toMatchObject({ operation: 'fetch', receiver: 'fromRedisStreams()' });
      const counted = Object.values(stats.snapshot().transportFaults).reduce((sum, n) => sum + n, 0);
      expect(counted).toBe(faults.length);
    } finally {
      subscription.unsubscribe();
    }
  }, 30_000);

  it('goes on with nothing lost and every key in order once Redis answers again before maxUnreachableMs', async () => {
    await add('a', 'a0', 'a1');
    await add('b', 'b0', 'slow');
    const faults: Fault[] = [];
    const handled: RedisStreamMessage[] = [];
    const slowStarted = deferred();
    const slowMayEnd = deferred();
    let outputError: unknown;
    const subscription = fromRedisStreams({
      redis,
      streams: [STREAM],
      group: GROUP,
      consumerName: 'c',
      maxWaitMs: 200,
      commandTimeoutMs: 500,
      maxUnreachableMs: 60_000,
      onTransportError: (fault) => faults.push(fault),
    })
      .pipe(
        keyedDispatch({
          key: (m) => m.key,
          handle: async (m) => {
            handled.push(m);
            if (m.data === 'slow') {
              slowStarted.resolve();
              await slowMayEnd.promise;
            }
          },
        }),
      )
      .subscribe({ error: (err) => (outputError = err) });
    try {
      await slowStarted.promise;
      server.pause();
      // Sent while Redis is stopped: they are added once it resumes.
      const addedDuringPause = Promise.all([add('a', 'a2', 'a3'), add('b', 'b2', 'b3')]);
      expect(await within(10_000, () => faults.some((f) => f.operation === 'fetch'))).toBe(true);
      // Its XACK goes unanswered too.
      slowMayEnd.resolve();
      expect(await within(10_000, () => faults.some((f) => f.operation === 'commit'))).toBe(true);
      server.resume();
      await addedDuringPause;
      await add('a', 'a4');
      expect(await within(15_000, () => handled.length === 9)).toBe(true);
      expect(await within(10_000, async () => (await pending()) === 0)).toBe(true);
      // Nothing more comes: each entry was handled once.
      await within(500, () => handled.length > 9);

      expect(handled.filter((m) => m.key === 'a').map((m) => m.data)).toEqual(['a0', 'a1', 'a2', 'a3', 'a4']);
      expect(handled.filter((m) => m.key === 'b').map((m) => m.data)).toEqual(['b0', 'slow', 'b2', 'b3']);
      expect(outputError).toBeUndefined();
      expect(faults[0]).toMatchObject({ receiver: 'fromRedisStreams()' });
    } finally {
      subscription.unsubscribe();
    }
  }, 60_000);
});
