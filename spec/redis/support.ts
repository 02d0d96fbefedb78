import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import Redis from 'ioredis';
import { startBroker } from '../support/brokers';

const ROOT = join(__dirname, '..', '..');

/** Entries pending (delivered, not acknowledged) per consumer, summed over `streams` at one instant (MULTI). */
export async function pendingByConsumer(
  redis: Redis,
  streams: string[],
  group: string,
): Promise<Map<string, number>> {
  const transaction = redis.multi();
  for (const stream of streams) transaction.xpending(stream, group);
  const replies = (await transaction.exec()) ?? [];
  const byConsumer = new Map<string, number>();
  for (const [err, reply] of replies) {
    if (err) throw err;
    const [, , , consumers] = reply as [number, unknown, unknown, [string, string][] | null];
    for (const [name, count] of consumers ?? [])
      byConsumer.set(name, (byConsumer.get(name) ?? 0) + Number(count));
  }
  return byConsumer;
}

/**
 * A Redis server of a spec's own on `port` (never the shared one on 6379), started and stopped with the
 * repository's script; `stop` may be called again after a restart. `forget()` removes what it saved.
 */
export class OwnRedis {
  constructor(readonly port: number) {}

  start(): void {
    this.script('start');
  }

  stop(): void {
    this.script('stop');
  }

  /** Deletes the snapshot a `SAVE` wrote, so the next start begins empty. */
  forget(): void {
    rmSync(join(ROOT, '.brokers', `redis-${this.port}`, 'dump.rdb'), { force: true });
  }

  private script(command: 'start' | 'stop'): void {
    execFileSync(join(ROOT, 'scripts', 'brokers', 'redis.sh'), [command], {
      env: { ...process.env, REDIS_PORT: String(this.port) },
      stdio: 'pipe',
    });
  }
}

/**
 * A `redis-server` of a spec's own, started as a child of the test process on a free port (never the
 * shared one on 6379), with nothing saved: `pause()` stops it (SIGSTOP) without closing its connections,
 * as a hung server or a network partition without RST looks to its clients; `resume()` lets it go on.
 */
export class PausableRedis {
  private constructor(
    readonly port: number,
    private readonly child: ChildProcess,
  ) {}

  /** Starts a server on a free port; resolves once it answers. */
  static async start(): Promise<PausableRedis> {
    const port = await freePort();
    const child = spawn(
      'redis-server',
      ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    const server = new PausableRedis(port, child);
    // Connection attempts repeat until the server listens; the PING waits for the first that succeeds.
    const probe = new Redis({ host: '127.0.0.1', port, retryStrategy: () => 50, maxRetriesPerRequest: null });
    probe.on('error', () => undefined);
    try {
      await probe.ping();
    } catch (err) {
      server.stop();
      throw err;
    } finally {
      probe.disconnect();
    }
    return server;
  }

  pause(): void {
    this.child.kill('SIGSTOP');
  }

  resume(): void {
    this.child.kill('SIGCONT');
  }

  /** Kills it (resumed first, so the kill is not held back). */
  stop(): void {
    this.child.kill('SIGCONT');
    this.child.kill('SIGKILL');
  }
}

/** A TCP port free on 127.0.0.1 now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * The shared Redis (started if it is not running) for a spec file, and stream names unique to this run
 * (so reruns start clean): `stream(name)` registers one, deleted after the file's tests.
 */
export function useSharedRedis(prefix: string): { readonly redis: Redis; stream(name: string): string } {
  const run = `${prefix}-${process.pid}-${Date.now()}`;
  const created: string[] = [];
  let redis: Redis;
  beforeAll(() => {
    startBroker('redis');
    redis = new Redis({ host: '127.0.0.1', port: 6379 });
  });
  afterAll(async () => {
    if (created.length > 0) await redis.del(...created);
    await redis.quit();
  });
  return {
    get redis() {
      return redis;
    },
    stream(name) {
      const stream = `${run}-${name}`;
      created.push(stream);
      return stream;
    },
  };
}
