import { booleanOption, describe } from '../validate';
import type {
  CommittedOffset,
  KafkaConsumerAdapter,
  KafkaConsumerListener,
  TopicPartition,
  TopicPartitionOffset,
} from './adapter';
import { causedBy } from './caused-by';
import {
  type RdKafkaAdmin,
  RdKafkaCodes,
  type RdKafkaConfig,
  type RdKafkaConsumer,
  type RdKafkaError,
  type RdMessage,
  type RdTopicPartition,
} from './confluent/client';
import { CommitOutcomes } from './confluent/commit-outcomes';
import { DeferredPauses } from './confluent/deferred-pauses';
import { byPartition } from './confluent/records';
import { illegalTopicName } from './confluent/topic-names';
import { partitionFetchBytes } from './fetch-size';

/**
 * The @confluentinc/kafka-javascript module (`import * as Confluent from '@confluentinc/kafka-javascript'`),
 * typed by the two native classes the adapter uses so the client stays an optional peer.
 */
export interface ConfluentKafkaClient {
  /** The native (librdkafka) consumer class; the adapter creates its consumer with it. */
  KafkaConsumer: {
    /** A consumer of librdkafka's global configuration (and default topic configuration). */
    new (config: Record<string, unknown>, topicConfig?: Record<string, unknown>): object;
  };
  /** The native admin client; one made from the consumer reads commit metadata back. */
  AdminClient: {
    /** An admin client over an existing consumer's (or producer's) connection. */
    createFrom(client: never): object;
  };
}

/** Options of `confluentAdapter`: the client, its configuration and the subscription. */
export interface ConfluentAdapterOptions {
  /** The @confluentinc/kafka-javascript module. */
  client: ConfluentKafkaClient;
  /**
   * librdkafka configuration of the consumer: `'bootstrap.servers'`, `'group.id'` (required), and any
   * other consumer property, e.g. `'group.protocol': 'consumer'` (Kafka 4+) for incremental rebalances.
   * The adapter sets `'enable.auto.commit'` (false), `'auto.offset.reset'` (from `fromBeginning`),
   * `'rebalance_cb'` and `'offset_commit_cb'` itself, and refuses them here. Unless set here,
   * `'fetch.message.max.bytes'` follows the receiver's `prefetch`.
   */
  config: Record<string, unknown>;
  /** Topics to subscribe to (a name starting with `^` is a regular expression, as librdkafka reads it). */
  topics: string[];
  /** Where a group without committed offsets starts: `true` earliest, `false` latest. Default false. */
  fromBeginning?: boolean;
}

/** Configuration properties the adapter sets itself. */
const OWNED_CONFIG = ['enable.auto.commit', 'auto.offset.reset', 'rebalance_cb', 'offset_commit_cb'];

/**
 * How long a `consume` call waits for its first message, in ms. The loop calls again at once, so this
 * only bounds how soon a closing consumer's loop ends; librdkafka fetches in the background meanwhile,
 * and serves rebalances and commit answers inside these calls.
 */
const CONSUME_WAIT_MS = 100;

/** The pause before consuming again after a failed `consume`. */
const RETRY_MS = 200;

/**
 * The longest the consume loop waits for room in full partitions (`KafkaConsumerListener.batch`) before
 * consuming again: rebalances and commit answers are served inside `consume` calls.
 */
const ROOM_WAIT_MS = 1000;

/**
 * The wait for room instead, while another partition's records may be queued behind the full ones'
 * (librdkafka has one queue): short, so they are not held ~1 s a call, and long enough for room to come
 * first on a steady flow, before the full partitions' next records are consumed (a full partition that
 * keeps coming is paused in librdkafka, which drops and later fetches again what it prefetched).
 */
const BEHIND_WAIT_MS = 100;

/** librdkafka errors that a broker outage causes. */
const OUTAGE_CODES = new Set<unknown>([
  -195, // ERR__TRANSPORT
  -193, // ERR__RESOLVE
  -187, // ERR__ALL_BROKERS_DOWN
  RdKafkaCodes.TIMED_OUT,
]);

/**
 * How long a start waits for the broker's first metadata when `'socket.timeout.ms'` is not set (the
 * client's own default for its `connect`). Without an answer the start fails as an outage and is tried again:
 * librdkafka itself keeps reconnecting silently, reporting nothing.
 */
const CONNECT_WAIT_MS = 30_000;

/**
 * The longest one metadata request of a start waits; the start asks again (with a new consumer) until
 * its connect wait has passed. A consumer's disconnect waits for its metadata request (the client holds
 * the connection's lock meanwhile), so this bounds how long a close waits while the broker does not answer.
 */
const CONNECT_SLICE_MS = 2000;

/** Whether `error` is one an outage causes, or one librdkafka calls retriable. */
function causedByOutage(error: unknown): boolean {
  return causedBy(error, (e) => {
    const rd = e as Partial<RdKafkaError>;
    return rd.isRetriable === true || OUTAGE_CODES.has(rd.code);
  });
}

const toPartition = ({ topic, partition }: RdTopicPartition): TopicPartition => ({ topic, partition });
const idOf = (p: TopicPartition) => `${p.topic}:${p.partition}`;

/**
 * Adapts @confluentinc/kafka-javascript's native consumer (librdkafka) to the receiver, creating the
 * consumer it needs. Rebalances come to a `rebalance_cb`, whose assign or unassign librdkafka waits for:
 * a revoke is let go only once the receiver has (running messages finished or `revokeTimeoutMs`
 * passed, positions committed), on the classic protocol too. librdkafka pauses every assigned partition
 * while a rebalance callback waits, so the partitions a member keeps wait for that revoke too. Fetching
 * is librdkafka's, read by a loop of `consume(prefetch)` calls that waits while every partition is
 * full or has nothing queued; a partition that goes on coming while full is paused in librdkafka alone (`DeferredPauses`).
 * Commits are explicit, with their metadata; each resolves once the broker answered (`offset_commit_cb`),
 * and a refusal rejects it. Commit metadata is read back through an admin client over the consumer's
 * connection: the consumer's own `committed` cuts the last character of metadata other clients wrote.
 * librdkafka ends what it commits with a NUL, which every adapter's reader drops.
 *
 * Errors librdkafka reports (`event.error`: a broker down, say) are `'connection'` faults; fetched
 * messages tell the broker answers again.
 */
export function confluentAdapter(options: ConfluentAdapterOptions): KafkaConsumerAdapter {
  const owner = 'confluentAdapter';
  const { client, config, topics } = options ?? ({} as ConfluentAdapterOptions);
  if (typeof client?.KafkaConsumer !== 'function' || typeof client.AdminClient?.createFrom !== 'function') {
    throw new TypeError(
      `${owner}: expected \`client\` to be the @confluentinc/kafka-javascript module (with KafkaConsumer and AdminClient), got ${describe(client)}`,
    );
  }
  if (!Array.isArray(topics) || topics.length === 0 || !topics.every((t) => typeof t === 'string')) {
    throw new TypeError(
      `${owner}: expected \`topics\` to be a non-empty array of topic names, got ${describe(topics)}`,
    );
  }
  const groupId = (config as RdKafkaConfig | undefined)?.['group.id'];
  if (typeof groupId !== 'string') {
    throw new TypeError(
      `${owner}: expected \`config\` to be librdkafka's consumer configuration with a string 'group.id', got ${describe(groupId)}`,
    );
  }
  for (const key of OWNED_CONFIG) {
    if (key in config) {
      throw new TypeError(
        `${owner}: \`config\` sets '${key}', which the adapter sets itself${key === 'auto.offset.reset' ? ' (from `fromBeginning`)' : ''}, got ${describe(config[key])}`,
      );
    }
  }
  const fromBeginning = booleanOption(owner, 'fromBeginning', options.fromBeginning, false);

  /** The consumer of the current start; a start that failed leaves it for a new one. */
  let consumer: RdKafkaConsumer | null = null;
  let admin: RdKafkaAdmin | null = null;
  let listener: KafkaConsumerListener | null = null;
  /** Partitions assigned and not being revoked, by id: only their messages are handed over. */
  const assigned = new Map<string, TopicPartition>();
  /**
   * By partition id, the offset below which librdkafka queues none of its records: the one after the last
   * record handed over, or its high watermark when a `consume` found the queue empty.
   */
  const drainedTo = new Map<string, number>();
  const commits = new CommitOutcomes();
  let closed = false;
  /** The consume loop, while it runs. */
  let consuming: Promise<void> | null = null;
  let pauses: DeferredPauses | null = null;

  const create = (fetchBytes: number): RdKafkaConsumer =>
    new client.KafkaConsumer({
      'fetch.message.max.bytes': fetchBytes,
      ...config,
      'enable.auto.commit': false,
      'auto.offset.reset': fromBeginning ? 'earliest' : 'latest',
      rebalance_cb: (error: RdKafkaError | undefined, partitions: RdTopicPartition[]) =>
        rebalance(error, partitions),
      offset_commit_cb: (error: RdKafkaError | null, partitions: RdTopicPartition[]) =>
        commits.answered(error, partitions),
    }) as RdKafkaConsumer;

  /**
   * A new consumer that has the broker's metadata. It asks in slices of at most `CONNECT_SLICE_MS`
   * (each failed one tears its consumer down), so a close never waits long for a broker that does not
   * answer; without an answer within the connect wait, the last slice's error fails the start.
   */
  async function connected(fetchBytes: number, to: KafkaConsumerListener): Promise<RdKafkaConsumer> {
    const deadline = Date.now() + Number(config['socket.timeout.ms'] ?? CONNECT_WAIT_MS);
    for (;;) {
      const member = create(fetchBytes);
      consumer = member;
      member.on('event.error', (error) => {
        if (!closed) to.transportFailed('connection', error);
      });
      const timeout = Math.max(1, Math.min(CONNECT_SLICE_MS, deadline - Date.now()));
      try {
        await new Promise<void>((resolve, reject) =>
          member.connect({ timeout }, (error) => (error ? reject(error) : resolve())),
        );
        return member;
      } catch (error) {
        consumer = null;
        if (closed || Date.now() >= deadline || !causedByOutage(error)) throw error;
      }
    }
  }

  /**
   * librdkafka waits for the assign or unassign call: a revoke's comes once the receiver let the
   * partitions go, unless the assignment is already lost (another member has them) or the consumer
   * closes (the receiver committed before closing).
   */
  function rebalance(error: RdKafkaError | undefined, partitions: RdTopicPartition[]): void {
    const member = consumer;
    if (member === null) return;
    const incremental = member.rebalanceProtocol() === 'COOPERATIVE';
    const list = partitions.map(toPartition);
    if (error?.code === RdKafkaCodes.ASSIGN_PARTITIONS) {
      if (incremental) member.incrementalAssign(partitions);
      else {
        assigned.clear();
        member.assign(partitions);
      }
      for (const p of list) {
        assigned.set(idOf(p), p);
        drainedTo.delete(idOf(p));
      }
      if (!closed) listener?.assigned(list, incremental ? 'added' : 'all');
      return;
    }
    if (error?.code !== RdKafkaCodes.REVOKE_PARTITIONS) {
      if (error !== undefined) listener?.failed(error);
      return;
    }
    // Stopped first, so no message of a revoked partition reaches the receiver after this.
    if (incremental) for (const p of list) assigned.delete(idOf(p));
    else assigned.clear();
    const letGo = () => {
      if (!member.isConnected()) return;
      try {
        if (incremental) member.incrementalUnassign(partitions);
        else member.unassign();
      } catch (unassignError) {
        listener?.transportFailed('connection', unassignError);
      }
    };
    if (closed || listener === null) {
      letGo();
      return;
    }
    const revoked = listener.revoking(incremental ? list : undefined);
    if (member.assignmentLost()) letGo();
    else void revoked.then(letGo);
  }

  /**
   * Consumes until closed, handing each call's messages over by partition. Once every partition that
   * brought records is full, it waits for room (as the floor's loop does), at most `ROOM_WAIT_MS`, or
   * `BEHIND_WAIT_MS` while another partition's records may be queued behind theirs (`recordsBehind`):
   * librdkafka goes on prefetching meanwhile, and nothing is paused in it.
   */
  async function consumeLoop(member: RdKafkaConsumer, to: KafkaConsumerListener, held: DeferredPauses) {
    while (!closed) {
      let messages: RdMessage[];
      try {
        messages = await new Promise<RdMessage[]>((resolve, reject) =>
          member.consume(to.prefetch, (error, found) => (error ? reject(error) : resolve(found))),
        );
      } catch (error) {
        if (closed) return;
        to.transportFailed('fetch', error);
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        continue;
      }
      if (closed) continue;
      if (messages.length === 0) {
        queueEmpty(member);
        continue;
      }
      to.transportRecovered();
      const rooms: Promise<void>[] = [];
      const full = new Set<string>();
      for (const { topic, partition, records, last, bytes } of byPartition(messages, (topic, partition) =>
        assigned.has(`${topic}:${partition}`),
      ).values()) {
        // Counted before the batch: only records of a partition paused already bring it nearer librdkafka's pause.
        held.brought(topic, partition, bytes);
        drainedTo.set(`${topic}:${partition}`, last + 1);
        const high = highWatermark(member, topic, partition);
        const room = to.batch(
          topic,
          partition,
          records,
          high > last + 1,
          high < 0 ? undefined : String(high),
        );
        if (room !== undefined) {
          rooms.push(room);
          full.add(`${topic}:${partition}`);
        }
      }
      if (rooms.length > 0) {
        await roomOrTimeout(
          Promise.all(rooms),
          recordsBehind(member, held, full) ? BEHIND_WAIT_MS : ROOM_WAIT_MS,
        );
      }
    }
  }

  /**
   * Whether a partition neither full nor paused by the receiver may have records queued behind the full
   * partitions' (its high watermark above its `drainedTo`; 0 until known). librdkafka queues every
   * partition's records in one queue, so the loop then waits for room only briefly: a full partition
   * that keeps coming is paused in librdkafka (`DeferredPauses`), which drops its queue.
   */
  function recordsBehind(member: RdKafkaConsumer, held: DeferredPauses, full: Set<string>): boolean {
    for (const [id, p] of assigned) {
      if (full.has(id) || held.has(p)) continue;
      const high = highWatermark(member, p.topic, p.partition);
      if (high > (drainedTo.get(id) ?? 0)) return true;
    }
    return false;
  }

  /** Nothing waits in librdkafka's queue: every partition is drained up to its high watermark. */
  function queueEmpty(member: RdKafkaConsumer): void {
    for (const [id, p] of assigned) {
      const high = highWatermark(member, p.topic, p.partition);
      if (high >= 0) drainedTo.set(id, high);
    }
  }

  return {
    async start(to: KafkaConsumerListener) {
      const illegal = illegalTopicName(topics);
      if (illegal !== undefined) {
        throw new Error(
          `${owner}: topic ${JSON.stringify(illegal)} is not a name Kafka accepts (1 to 249 of a-z, A-Z, 0-9, '.', '_', '-')`,
        );
      }
      listener = to;
      const fetchBytes = Number(config['fetch.message.max.bytes'] ?? partitionFetchBytes(to.prefetch));
      const member = await connected(fetchBytes, to);
      admin = client.AdminClient.createFrom(member as never) as RdKafkaAdmin;
      member.setDefaultConsumeTimeout(CONSUME_WAIT_MS);
      member.setDefaultIsTimeoutOnlyForFirstMessage(true);
      if (closed) return disconnect(member);
      member.subscribe(topics);
      pauses = new DeferredPauses(fetchBytes, {
        pause: (p) => call((m) => m.pause([p])),
        resume: (p) => call((m) => m.resume([p])),
      });
      consuming = consumeLoop(member, to, pauses);
    },
    isOutage: causedByOutage,
    pause(partitions) {
      pauses?.pause(partitions);
    },
    resume(partitions) {
      pauses?.resume(partitions);
    },
    commit(offsets: readonly TopicPartitionOffset[]) {
      const member = consumer;
      if (member === null) return Promise.resolve();
      return commits.commit(() =>
        member.commit(
          offsets.map(({ topic, partition, offset, metadata }) => ({
            topic,
            partition,
            offset: Number(offset),
            ...(metadata !== undefined && { metadata }),
          })),
        ),
      );
    },
    async committed(partitions) {
      if (admin === null) throw new Error(`${owner}: committed() before start()`);
      const reader = admin;
      const [group] = await new Promise<Array<{ error?: RdKafkaError; partitions: RdTopicPartition[] }>>(
        (resolve, reject) =>
          reader.listConsumerGroupOffsets(
            [{ groupId, partitions: partitions.map(toPartition) }],
            {},
            (error, result) => (error ? reject(error) : resolve(result)),
          ),
      );
      if (group?.error) throw group.error;
      const found = new Map((group?.partitions ?? []).map((p) => [idOf(p), p]));
      return partitions.map(({ topic, partition }): CommittedOffset => {
        const p = found.get(idOf({ topic, partition }));
        // librdkafka reports "no committed offset" as -1 (or -1001, its invalid offset).
        const offset = p?.offset === undefined || p.offset < 0 ? null : String(p.offset);
        return { topic, partition, offset, metadata: offset === null ? null : (p?.metadata ?? null) };
      });
    },
    async close() {
      closed = true;
      await consuming;
      const member = consumer;
      if (member !== null) await disconnect(member);
      commits.abandon(new Error(`${owner}: the consumer closed before the broker answered the commit`));
    },
  };

  /**
   * Pause and resume throw once the consumer is disconnected, or for a partition no longer assigned:
   * nothing of it is fetched then.
   */
  function call(action: (member: RdKafkaConsumer) => void): void {
    if (consumer === null || !consumer.isConnected()) return;
    try {
      action(consumer);
    } catch {
      // Nothing to pause or resume.
    }
  }
}

/** Resolves once `room` does, or after `ms`. */
function roomOrTimeout(room: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([room, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]).then(() =>
    clearTimeout(timer),
  );
}

/** The partition's high watermark as the last fetch response told it; -1 when it is not known. */
function highWatermark(member: RdKafkaConsumer, topic: string, partition: number): number {
  try {
    return member.getWatermarkOffsets(topic, partition).highOffset;
  } catch {
    return -1;
  }
}

/** Leaves the group (the revoke it brings is let go at once) and closes the connections. */
function disconnect(member: RdKafkaConsumer): Promise<void> {
  if (!member.isConnected()) return Promise.resolve();
  member.unsubscribe();
  return new Promise<void>((resolve, reject) =>
    member.disconnect((error) => (error ? reject(error) : resolve())),
  );
}
