import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type Redis from 'ioredis';

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
