import { booleanOption, integerOption } from '../validate';
import type {
  CommittedOffset,
  KafkaConsumerAdapter,
  KafkaConsumerListener,
  TopicPartition,
  TopicPartitionOffset,
} from './adapter';
import { causedBy } from './caused-by';
import { partitionFetchBytes } from './fetch-size';
import { ClassicMember } from './platformatic/classic-member';
import type { Consumer } from './platformatic/client';
import { closeConsumer } from './platformatic/close-consumer';
import { ConsumerProtocolMember } from './platformatic/consumer-protocol-member';
import { GroupCoordinator } from './platformatic/coordinator';
import { Fetcher } from './platformatic/fetcher';
import { clientHooks } from './platformatic/hooks';
import type { Membership, MembershipEvents } from './platformatic/membership';

/**
 * A @platformatic/kafka 2.12 `Consumer` (peer range `~2.12.1`), created and not yet consuming (typed by the few members the
 * adapter names, so the client stays an optional peer). Create it with `groupProtocol: 'consumer'`
 * (KIP-848, Kafka 4+) for incremental rebalances whose revokes wait for running messages.
 */
export interface PlatformaticConsumer {
  /** The consumer group it joins. */
  readonly groupId: string;
  /** The topics it follows; the adapter adds the subscribed ones. */
  readonly topics: {
    /** Follows a topic (its metadata is kept, the group subscription names it). */
    track(topic: string): boolean;
  };
  /** Leaves the group and closes the connections. */
  close(force?: boolean): Promise<void>;
}

/** Options of `platformaticAdapter`: the subscription and how fetching waits. */
export interface PlatformaticAdapterOptions {
  /** Topics to subscribe to. */
  topics: string[];
  /** Where a group without committed offsets starts: `true` earliest, `false` latest. Default false. */
  fromBeginning?: boolean;
  /**
   * How long a fetch waits on the broker for new records, in ms. A partition resumed or assigned
   * meanwhile is fetched once it returns. Integer ≥ 0. Default 500.
   */
  maxWaitMs?: number;
}

/** ListOffsets timestamps that stand for the earliest and the latest offset. */
const EARLIEST = -2n;
const LATEST = -1n;

const idOf = (p: TopicPartition) => `${p.topic}:${p.partition}`;

function byTopic(partitions: readonly TopicPartition[]): Map<string, number[]> {
  const topics = new Map<string, number[]>();
  for (const { topic, partition } of partitions) {
    const list = topics.get(topic);
    if (list === undefined) topics.set(topic, [partition]);
    else list.push(partition);
  }
  return topics;
}

/**
 * Adapts a @platformatic/kafka consumer (created, not yet consuming) to the receiver. It fetches per
 * partition itself (so the receiver can pause one partition while the others flow) and commits
 * explicit offsets with their metadata. With `groupProtocol: 'consumer'` it heartbeats the group
 * itself and acknowledges a revocation only once the receiver has let the partitions go (their
 * running messages finished, or `revokeTimeoutMs` passed, and their positions committed); with the
 * classic protocol the client rebalances eagerly, like kafkajs.
 *
 * It uses a few internal hooks of the client besides its public API; they are checked here, once: a
 * consumer that lacks any (another release line of the client, another kind of client) is refused with
 * a `TypeError` naming the client's version and each missing piece.
 */
export function platformaticAdapter(
  consumer: PlatformaticConsumer,
  options: PlatformaticAdapterOptions,
): KafkaConsumerAdapter & {
  /** The group's committed offsets and metadata for these partitions. */
  committed(partitions: readonly TopicPartition[]): Promise<CommittedOffset[]>;
} {
  if (
    !Array.isArray(options?.topics) ||
    options.topics.length === 0 ||
    !options.topics.every((t) => typeof t === 'string')
  ) {
    throw new TypeError('platformaticAdapter: expected `topics` to be a non-empty array of topic names');
  }
  const hooks = clientHooks(consumer, 'platformaticAdapter');
  const maxWaitMs = integerOption('platformaticAdapter', 'maxWaitMs', options.maxWaitMs, 500, 0);
  const fromBeginning = booleanOption('platformaticAdapter', 'fromBeginning', options.fromBeginning, false);
  const client = consumer as unknown as Consumer;
  const topics = [...options.topics];
  let coordinator: GroupCoordinator | null = null;
  let membership: Membership | null = null;
  let fetcher: Fetcher | null = null;

  const offsetsAt = async (partitions: readonly TopicPartition[], timestamp: bigint) => {
    const offsets = new Map<string, bigint>();
    for (const [topic, list] of byTopic(partitions)) {
      const found = await client.listOffsets({ topics: [topic], partitions: { [topic]: list }, timestamp });
      for (const partition of list) {
        const offset = found.get(topic)?.[partition];
        if (offset !== undefined) offsets.set(idOf({ topic, partition }), offset);
      }
    }
    return offsets;
  };
  const resetOffsets = (partitions: readonly TopicPartition[]) =>
    offsetsAt(partitions, fromBeginning ? EARLIEST : LATEST);

  async function committed(partitions: readonly TopicPartition[]): Promise<CommittedOffset[]> {
    if (coordinator === null) throw new Error('platformaticAdapter: committed() before start()');
    const response = await coordinator.call<{
      groups: Array<{
        topics: Array<{
          name: string;
          partitions: Array<{ partitionIndex: number; committedOffset: bigint; metadata: string | null }>;
        }>;
      }>;
    }>(
      'OffsetFetch',
      [
        {
          groupId: client.groupId,
          memberId: null,
          memberEpoch: -1,
          topics: [...byTopic(partitions)].map(([name, partitionIndexes]) => ({ name, partitionIndexes })),
        },
      ],
      false,
    );
    const found = new Map<string, CommittedOffset>();
    for (const { name, partitions: list } of response.groups[0]?.topics ?? []) {
      for (const { partitionIndex, committedOffset, metadata } of list) {
        found.set(idOf({ topic: name, partition: partitionIndex }), {
          topic: name,
          partition: partitionIndex,
          offset: committedOffset < 0n ? null : committedOffset.toString(),
          metadata: committedOffset < 0n ? null : (metadata ?? null),
        });
      }
    }
    return partitions.map(
      ({ topic, partition }) =>
        found.get(idOf({ topic, partition })) ?? { topic, partition, offset: null, metadata: null },
    );
  }

  async function startOffsets(partitions: readonly TopicPartition[]): Promise<Map<string, bigint>> {
    const offsets = new Map<string, bigint>();
    const missing: TopicPartition[] = [];
    for (const c of await committed(partitions)) {
      if (c.offset === null) missing.push(c);
      else offsets.set(idOf(c), BigInt(c.offset));
    }
    for (const [id, offset] of await resetOffsets(missing)) offsets.set(id, offset);
    return offsets;
  }

  return {
    async start(listener: KafkaConsumerListener) {
      for (const topic of topics) client.topics.track(topic);
      coordinator = new GroupCoordinator(client, hooks);
      const clientOptions = (client as unknown as Record<symbol, unknown>)[hooks.options] as {
        groupProtocol?: string;
        groupInstanceId?: string;
        rebalanceTimeout?: number;
        heartbeatInterval?: number;
        maxBytesPerPartition?: number;
      };
      /** The consumer's group instance id (static membership), or null. */
      const instanceId = clientOptions.groupInstanceId ?? null;
      const running = new Fetcher(client, listener, {
        maxWaitMs,
        // Sized from the receiver's buffer unless the consumer sets it: a response lands whole in it.
        maxBytesPerPartition: clientOptions.maxBytesPerPartition ?? partitionFetchBytes(listener.prefetch),
        startOffsets,
        resetOffsets,
      });
      const events: MembershipEvents = {
        assigned(partitions, mode) {
          if (mode === 'all') running.removeAll();
          running.add(partitions);
          listener.assigned(partitions, mode);
        },
        revoking(partitions) {
          // Stopped first, so no record of a revoked partition reaches the receiver after this.
          if (partitions === undefined) running.removeAll();
          else running.remove(partitions);
          return listener.revoking(partitions);
        },
        failed: (error) => listener.failed(error),
        transportFailed: (operation, error) => listener.transportFailed(operation, error),
        transportRecovered: () => listener.transportRecovered(),
      };
      membership =
        clientOptions.groupProtocol === 'consumer'
          ? new ConsumerProtocolMember(
              client,
              coordinator,
              topics,
              { rebalanceTimeoutMs: clientOptions.rebalanceTimeout ?? 60_000, instanceId },
              events,
            )
          : new ClassicMember(client, events, clientOptions.heartbeatInterval ?? 3000);
      fetcher = running;
      try {
        await membership.start();
      } catch (error) {
        // Started again after an outage (`isOutage`) with a new membership: this one stops listening.
        await membership.leave();
        throw error;
      }
      running.start();
    },
    // The client's own errors say whether trying again may help (a connection refused, no coordinator yet).
    isOutage: (error) => causedBy(error, (e) => e.canRetry === true),
    pause(partitions) {
      fetcher?.pause(partitions);
    },
    resume(partitions) {
      fetcher?.resume(partitions);
    },
    async commit(offsets: readonly TopicPartitionOffset[]) {
      if (coordinator === null || membership === null) return;
      const { memberId, generationIdOrMemberEpoch, instanceId } = membership.identity();
      const topicsToCommit = new Map<string, unknown[]>();
      for (const { topic, partition, offset, metadata } of offsets) {
        const list = topicsToCommit.get(topic) ?? [];
        list.push({
          partitionIndex: partition,
          committedOffset: BigInt(offset),
          committedLeaderEpoch: -1,
          committedMetadata: metadata ?? null,
        });
        topicsToCommit.set(topic, list);
      }
      await coordinator.call(
        'OffsetCommit',
        client.groupId,
        generationIdOrMemberEpoch,
        memberId,
        instanceId,
        [...topicsToCommit].map(([name, partitions]) => ({ name, partitions })),
      );
    },
    committed,
    async close() {
      await fetcher?.close();
      await membership?.leave();
      await closeConsumer(client);
    },
  };
}
