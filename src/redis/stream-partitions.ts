import { describe, integerOption } from '../validate';
import type { RedisClient } from './redis-client';

/**
 * A key-partitioned stream layout: `count` streams named `<prefix>:0` … `<prefix>:<count - 1>`, each
 * key always written to the same one (FNV-1a 32-bit hash of the key's UTF-8 bytes, modulo `count`), and
 * each stream read by exactly one consumer at a time. Per-key order then holds across consumer
 * processes the way it holds within a Kafka partition: one stream, one reader, read in order.
 *
 * The hash is fixed and language-neutral so producers in other runtimes can compute the same stream.
 * Changing `count` moves keys between streams: drain the streams first (see docs/redis.md).
 */
export class StreamPartitions {
  /** The streams' common name: stream `p` is `<prefix>:<p>`. */
  readonly prefix: string;
  /** How many streams the layout has. */
  readonly count: number;

  constructor(prefix: string, count: number) {
    if (typeof prefix !== 'string' || prefix.length === 0) {
      throw new TypeError(
        `StreamPartitions: expected \`prefix\` to be a non-empty string, got ${describe(prefix)}`,
      );
    }
    if (count === undefined) {
      throw new TypeError('StreamPartitions: expected `count` to be an integer >= 1, got undefined');
    }
    this.prefix = prefix;
    this.count = integerOption('StreamPartitions', 'count', count, 1, 1);
  }

  /** Every stream of the layout, in partition order. */
  names(): string[] {
    return Array.from({ length: this.count }, (_, i) => this.nameOf(i));
  }

  /** The name of stream `partition`: `<prefix>:<partition>`. */
  nameOf(partition: number): string {
    return `${this.prefix}:${partition}`;
  }

  /** The stream that holds `key`'s messages. */
  streamFor(key: string): string {
    return this.nameOf(fnv1a32(key) % this.count);
  }

  /**
   * The streams consumer `index` of `consumers` reads: partitions `p` with `p % consumers === index`.
   * A static assignment: every consumer process must be started with the same `consumers` and a
   * distinct `index`; a stream whose consumer is down waits for it (or for a replacement started
   * with its index), which then recovers its pending entries.
   */
  assigned(index: number, consumers: number): string[] {
    integerOption('StreamPartitions.assigned', 'consumers', consumers, 1, 1);
    integerOption('StreamPartitions.assigned', 'index', index, 0, 0);
    if (index >= consumers) {
      throw new RangeError(
        `StreamPartitions.assigned: expected \`index\` to be below \`consumers\` (${consumers}), got ${describe(index)}`,
      );
    }
    return this.names().filter((_, partition) => partition % consumers === index);
  }

  /** Appends a message for `key` to its stream, as the fields `key` and `data`. Resolves to the entry id. */
  async publish(redis: RedisClient, key: string, data: string): Promise<string> {
    return (await redis.xadd(this.streamFor(key), '*', 'key', key, 'data', data)) as string;
  }
}

/** FNV-1a, 32 bits, over the UTF-8 bytes of `text`: small, stable and easy to reproduce elsewhere. */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
