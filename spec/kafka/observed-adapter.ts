import {
  type KafkaConsumerAdapter,
  type KafkaConsumerListener,
  KafkaReceiver,
  type KafkaReceiverOptions,
  type TopicPartition,
} from 'keyed-dispatch/kafka';
import type { ClientAdapter } from './adapters';

export type AdapterEvent =
  | { kind: 'pause' | 'resume'; partitions: TopicPartition[] }
  | { kind: 'revoking'; partitions?: TopicPartition[] }
  | { kind: 'assigned'; partitions: TopicPartition[]; mode?: 'all' | 'added' };

/**
 * Passes everything through to a real adapter and records what the receiver asked of it and what it
 * reported, so specs can wait for a pause, a resume or a rebalance instead of sleeping.
 */
export class ObservedAdapter implements KafkaConsumerAdapter {
  readonly events: AdapterEvent[] = [];
  /** When each commit was asked for (`performance.now()`). */
  readonly commitStarts: number[] = [];
  /** How many records each batch (a partition's share of a fetch) handed to the receiver. */
  readonly batchSizes: number[] = [];
  /** Revokes the receiver has not finished yet (its running messages waited for and committed). */
  revokesRunning = 0;
  private waiters: Array<{ matches: (e: AdapterEvent) => boolean; resolve: () => void }> = [];

  /** `committedDelayMs`: reading commit metadata back answers that much later, as a loaded broker's may. */
  constructor(
    private readonly inner: KafkaConsumerAdapter,
    private readonly committedDelayMs = 0,
  ) {}

  /** Resolves at the first event (already recorded or future) that `matches` accepts. */
  next(matches: (e: AdapterEvent) => boolean, after = 0): Promise<void> {
    if (this.events.slice(after).some(matches)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ matches, resolve }));
  }

  private record(event: AdapterEvent): void {
    this.events.push(event);
    this.waiters = this.waiters.filter((w) => {
      if (!w.matches(event)) return true;
      w.resolve();
      return false;
    });
  }

  start(listener: KafkaConsumerListener): Promise<void> {
    return this.inner.start({
      prefetch: listener.prefetch,
      batch: (topic, partition, records) => {
        this.batchSizes.push(records.length);
        return listener.batch(topic, partition, records);
      },
      revoking: async (partitions) => {
        this.record({ kind: 'revoking', partitions: partitions && [...partitions] });
        this.revokesRunning++;
        try {
          await listener.revoking(partitions);
        } finally {
          this.revokesRunning--;
        }
      },
      assigned: (partitions, mode) => {
        this.record({ kind: 'assigned', partitions: [...partitions], mode });
        listener.assigned(partitions, mode);
      },
      failed: (error) => listener.failed(error),
      transportFailed: (operation, error) => listener.transportFailed(operation, error),
      transportRecovered: () => listener.transportRecovered(),
    });
  }

  pause(partitions: readonly TopicPartition[]): void {
    this.record({
      kind: 'pause',
      partitions: partitions.map(({ topic, partition }) => ({ topic, partition })),
    });
    this.inner.pause(partitions);
  }

  resume(partitions: readonly TopicPartition[]): void {
    this.record({
      kind: 'resume',
      partitions: partitions.map(({ topic, partition }) => ({ topic, partition })),
    });
    this.inner.resume(partitions);
  }

  commit(offsets: Parameters<KafkaConsumerAdapter['commit']>[0]): Promise<void> {
    this.commitStarts.push(performance.now());
    return this.inner.commit(offsets);
  }

  async committed(partitions: readonly TopicPartition[]): ReturnType<KafkaConsumerAdapter['committed']> {
    const committed = await this.inner.committed(partitions);
    if (this.committedDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.committedDelayMs));
    return committed;
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** A receiver on `kind`'s adapter, observed: the specs wait on its adapter's events. */
export function observedReceiver(
  kind: ClientAdapter,
  groupId: string,
  topics: string[],
  options: KafkaReceiverOptions = {},
): { adapter: ObservedAdapter; receiver: KafkaReceiver } {
  const adapter = new ObservedAdapter(kind.adapter(groupId, topics));
  return { adapter, receiver: new KafkaReceiver(adapter, options) };
}
