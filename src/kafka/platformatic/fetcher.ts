import type { KafkaConsumerListener, TopicPartition } from '../adapter';
import { type Consumer, ErrorCodes, responseOf } from './client';
import { nextOffset, type RecordBatch, toKafkaRecords } from './records';

/** Where a partition's fetching stands. */
interface Position extends TopicPartition {
  /** The next offset to fetch; null while it is being looked up. */
  offset: bigint | null;
  paused: boolean;
}

interface FetchResponse {
  responses: Array<{
    topicId: string;
    partitions: Array<{
      partitionIndex: number;
      errorCode: number;
      highWatermark: bigint;
      records?: RecordBatch[];
    }>;
  }>;
}

export interface FetcherOptions {
  /** How long a fetch waits on the broker for records, in ms. */
  maxWaitMs: number;
  /** Most bytes fetched per partition and request. */
  maxBytesPerPartition: number;
  /** Where fetching of newly assigned partitions starts (committed offset, else the reset point). */
  startOffsets(partitions: readonly TopicPartition[]): Promise<Map<string, bigint>>;
  /** Where a partition whose offset is out of range starts again (earliest or latest). */
  resetOffsets(partitions: readonly TopicPartition[]): Promise<Map<string, bigint>>;
}

const idOf = (p: TopicPartition) => `${p.topic}:${p.partition}`;

/** The pause before a failed fetch or offset lookup is tried again, in ms. */
const RETRY_MS = 200;

/** A fetched partition's error code, as an error for `transportFailed`. */
class PartitionFetchError extends Error {
  override name = 'PartitionFetchError';
  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly errorCode: number,
  ) {
    super(`fetching topic '${topic}' partition ${partition} failed with Kafka error code ${errorCode}`);
  }
}

/**
 * Fetches the assigned partitions, one request per partition leader at a time, skipping paused ones:
 * the client's own message stream can only pause everything, the receiver pauses per partition. A failed
 * fetch or offset lookup is reported (`transportFailed`) and tried again after a moment; an answer from
 * the broker is reported as `transportRecovered`.
 */
export class Fetcher {
  private readonly positions = new Map<string, Position>();
  private wakeUp: (() => void) | null = null;
  private closed = false;
  private running: Promise<void> | null = null;

  constructor(
    private readonly consumer: Consumer,
    private readonly listener: Pick<
      KafkaConsumerListener,
      'batch' | 'transportFailed' | 'transportRecovered'
    >,
    private readonly options: FetcherOptions,
  ) {}

  start(): void {
    this.running ??= this.run();
  }

  /** Starts fetching these partitions at their start offsets. */
  add(partitions: readonly TopicPartition[]): void {
    const added: Position[] = [];
    for (const { topic, partition } of partitions) {
      const position: Position = { topic, partition, offset: null, paused: false };
      this.positions.set(idOf(position), position);
      added.push(position);
    }
    if (added.length > 0) this.place(added, this.options.startOffsets);
  }

  remove(partitions: readonly TopicPartition[]): void {
    for (const partition of partitions) this.positions.delete(idOf(partition));
  }

  removeAll(): void {
    this.positions.clear();
  }

  pause(partitions: readonly TopicPartition[]): void {
    for (const partition of partitions) {
      const position = this.positions.get(idOf(partition));
      if (position !== undefined) position.paused = true;
    }
  }

  resume(partitions: readonly TopicPartition[]): void {
    for (const partition of partitions) {
      const position = this.positions.get(idOf(partition));
      if (position !== undefined) position.paused = false;
    }
    this.wake();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wake();
    await this.running;
  }

  private wake(): void {
    this.wakeUp?.();
    this.wakeUp = null;
  }

  /**
   * Looks up where these positions start; a position revoked meanwhile is left alone. A failed lookup is
   * tried again, for the positions still current.
   */
  private place(
    positions: Position[],
    lookup: (partitions: readonly TopicPartition[]) => Promise<Map<string, bigint>>,
  ): void {
    const current = positions.filter((position) => this.positions.get(idOf(position)) === position);
    if (this.closed || current.length === 0) return;
    lookup(current).then(
      (offsets) => {
        this.listener.transportRecovered();
        for (const position of current) {
          const offset = offsets.get(idOf(position));
          if (offset !== undefined && this.positions.get(idOf(position)) === position)
            position.offset = offset;
        }
        this.wake();
      },
      (error) => {
        if (this.closed) return;
        this.listener.transportFailed('fetch', error);
        setTimeout(() => this.place(current, lookup), RETRY_MS);
      },
    );
  }

  private async run(): Promise<void> {
    while (!this.closed) {
      const ready = [...this.positions.values()].filter((p) => p.offset !== null && !p.paused);
      if (ready.length === 0) {
        await new Promise<void>((resolve) => {
          this.wakeUp = resolve;
        });
        continue;
      }
      try {
        await this.fetch(ready);
      } catch (error) {
        if (this.closed) return;
        // Leadership moved or a connection dropped: fresh metadata, a moment's pause, and again.
        this.listener.transportFailed('fetch', error);
        this.consumer.clearMetadata();
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  }

  /** One fetch round: a request to each leader of the ready partitions, each delivered as it returns. */
  private async fetch(ready: Position[]): Promise<void> {
    const metadata = await this.consumer.metadata({ topics: this.consumer.topics.current });
    const names = new Map<string, string>();
    const byLeader = new Map<number, Map<string, { topicId: string; partitions: unknown[] }>>();
    const asked = new Map<string, { position: Position; offset: bigint }>();
    for (const position of ready) {
      const topic = metadata.topics.get(position.topic);
      const leader = topic?.partitions[position.partition]?.leader;
      if (topic === undefined || leader === undefined) continue;
      names.set(topic.id, position.topic);
      let topics = byLeader.get(leader);
      if (topics === undefined) byLeader.set(leader, (topics = new Map()));
      let request = topics.get(topic.id);
      if (request === undefined) topics.set(topic.id, (request = { topicId: topic.id, partitions: [] }));
      const offset = position.offset as bigint;
      request.partitions.push({
        partition: position.partition,
        fetchOffset: offset,
        partitionMaxBytes: this.options.maxBytesPerPartition,
        currentLeaderEpoch: -1,
        lastFetchedEpoch: -1,
      });
      asked.set(idOf(position), { position, offset });
    }
    await Promise.all(
      [...byLeader].map(async ([node, topics]) => {
        let response: FetchResponse;
        try {
          response = (await this.consumer.fetch({
            node,
            topics: [...topics.values()] as never,
            maxWaitTime: this.options.maxWaitMs,
          })) as unknown as FetchResponse;
        } catch (error) {
          // A partition's error fails the whole request; the others' records come with it.
          const partial = responseOf<FetchResponse>(error, (r) => 'responses' in r);
          if (partial === undefined) throw error;
          response = partial;
        }
        this.listener.transportRecovered();
        // A full partition beside quiet ones holds the next fetch round (`KafkaConsumerListener.batch`): a
        // fetch of the others meanwhile would long-poll them, and keep the resumed one waiting.
        await Promise.all(this.deliver(response, names, asked));
      }),
    );
  }

  /** Hands each partition's records to the receiver; returns the waits for room it asked for. */
  private deliver(
    response: FetchResponse,
    names: Map<string, string>,
    asked: Map<string, { position: Position; offset: bigint }>,
  ): Promise<void>[] {
    const outOfRange: Position[] = [];
    const rooms: Promise<void>[] = [];
    for (const { topicId, partitions } of response.responses) {
      const topic = names.get(topicId);
      if (topic === undefined) continue;
      for (const { partitionIndex, errorCode, highWatermark, records } of partitions) {
        const request = asked.get(`${topic}:${partitionIndex}`);
        // Revoked (or moved) since it was asked for: its records are not ours to deliver.
        if (request === undefined || this.positions.get(idOf(request.position)) !== request.position)
          continue;
        const { position, offset } = request;
        if (position.offset !== offset) continue;
        if (errorCode === ErrorCodes.OFFSET_OUT_OF_RANGE) {
          position.offset = null;
          outOfRange.push(position);
          continue;
        }
        if (errorCode !== 0) {
          // Retried with the next round (a leader moving, say): told, so a lasting one is seen.
          this.listener.transportFailed('fetch', new PartitionFetchError(topic, partitionIndex, errorCode));
          continue;
        }
        if (records === undefined) continue;
        const next = nextOffset(records);
        if (next !== null && next > offset) position.offset = next;
        const messages = toKafkaRecords(records, offset);
        const behind = next !== null && next < highWatermark;
        const room =
          messages.length > 0
            ? this.listener.batch(topic, partitionIndex, messages, behind, String(highWatermark))
            : undefined;
        if (room !== undefined) rooms.push(room);
      }
    }
    if (outOfRange.length > 0) this.place(outOfRange, this.options.resetOffsets);
    return rooms;
  }
}
