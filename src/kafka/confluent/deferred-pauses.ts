import type { TopicPartition } from '../adapter';

/** A pause librdkafka was told of: its resume must be told too. */
const TOLD = -1;

/**
 * Pauses of partitions, told to librdkafka only once a paused partition has brought `limitBytes` more
 * (keys and values). librdkafka's `pause` drops what it prefetched of the partition (its `resume` fetches that
 * again), and both calls block the thread until librdkafka's own threads answer; the receiver pauses a
 * partition whose buffer filled and resumes it at half, on a steady flow every few hundred records.
 * Records of a partition paused here still come, and the receiver takes them ("records already fetched
 * may still arrive"): only a partition that keeps coming while full, a slow one, is paused in librdkafka.
 * librdkafka queues what it fetched a fetch response at a time, each partition's part whole (up to
 * `fetch.message.max.bytes`): a limit of that size lets the part fetched before the pause come.
 */
export class DeferredPauses {
  /** Paused partitions by id: bytes brought since the pause, or `TOLD`. */
  private readonly paused = new Map<string, number>();

  constructor(
    private readonly limitBytes: number,
    private readonly tell: { pause(p: TopicPartition): void; resume(p: TopicPartition): void },
  ) {}

  pause(partitions: readonly TopicPartition[]): void {
    for (const p of partitions) {
      const id = `${p.topic}:${p.partition}`;
      if (!this.paused.has(id)) this.paused.set(id, 0);
    }
  }

  resume(partitions: readonly TopicPartition[]): void {
    for (const p of partitions) {
      const id = `${p.topic}:${p.partition}`;
      const brought = this.paused.get(id);
      this.paused.delete(id);
      if (brought === TOLD) this.tell.resume(p);
    }
  }

  /** Whether the receiver paused the partition (told to librdkafka or not). */
  has(p: TopicPartition): boolean {
    return this.paused.has(`${p.topic}:${p.partition}`);
  }

  /** Records of `bytes` came for the partition: a paused one past `limitBytes` is paused in librdkafka. */
  brought(topic: string, partition: number, bytes: number): void {
    const id = `${topic}:${partition}`;
    const brought = this.paused.get(id);
    if (brought === undefined || brought === TOLD) return;
    if (brought + bytes < this.limitBytes) this.paused.set(id, brought + bytes);
    else {
      this.paused.set(id, TOLD);
      this.tell.pause({ topic, partition });
    }
  }
}
