import { booleanOption } from '../validate';
import type {
  CommittedOffset,
  KafkaConsumerAdapter,
  KafkaConsumerListener,
  TopicPartition,
  TopicPartitionOffset,
} from './adapter';
import { causedBy } from './caused-by';
import type { KafkaRecord } from './message';

/** The part of a kafkajs `Consumer` the adapter uses (typed structurally: kafkajs stays optional). */
export interface KafkaJsConsumer {
  /** kafkajs' `connect`. */
  connect(): Promise<void>;
  /** kafkajs' `disconnect`: leaves the group. */
  disconnect(): Promise<void>;
  /** kafkajs' `subscribe`. */
  subscribe(subscription: { topics: Array<string | RegExp>; fromBeginning?: boolean }): Promise<void>;
  /** kafkajs' `run`, with manual commits and batch handling. */
  run(config: {
    autoCommit: boolean;
    eachBatchAutoResolve: boolean;
    partitionsConsumedConcurrently: number;
    eachBatch: (payload: KafkaJsBatchPayload) => Promise<void>;
  }): Promise<void>;
  /** kafkajs' `commitOffsets`, with each partition's commit metadata. */
  commitOffsets(
    offsets: Array<{ topic: string; partition: number; offset: string; metadata?: string | null }>,
  ): Promise<void>;
  /** kafkajs' `pause`: stops fetching these partitions. */
  pause(topics: Array<{ topic: string; partitions?: number[] }>): void;
  /** kafkajs' `resume`: fetches these partitions again. */
  resume(topics: Array<{ topic: string; partitions?: number[] }>): void;
  /** kafkajs' `on`: listens to an instrumentation event. */
  on(eventName: any, listener: (event: any) => void): unknown;
  /** kafkajs' instrumentation event names the adapter listens to. */
  readonly events: {
    /** The member joined the group and has its assignment. */
    GROUP_JOIN: string;
    /** A rebalance began: every partition is about to be revoked. */
    REBALANCING: string;
    /** The consumer crashed; kafkajs says whether it restarts. */
    CRASH: string;
    /** A fetch returned. */
    FETCH: string;
    /** A heartbeat was answered. */
    HEARTBEAT: string;
    /** The consumer stopped (on a crash too, before CRASH): its group is gone. */
    STOP: string;
  };
}

/** The part of a kafkajs `Admin` the adapter uses, to read committed offsets and their metadata back. */
export interface KafkaJsAdmin {
  /** kafkajs' `connect`. */
  connect(): Promise<void>;
  /** kafkajs' `disconnect`. */
  disconnect(): Promise<void>;
  /** kafkajs' `fetchOffsets`: the group's committed offsets, with their metadata. */
  fetchOffsets(options: { groupId: string; topics: string[] }): Promise<
    Array<{
      /** The topic. */
      topic: string;
      /** Its partitions' committed positions. */
      partitions: Array<{
        /** The partition. */
        partition: number;
        /** The committed offset (`-1` when none). */
        offset: string;
        /** The metadata committed with it. */
        metadata: string | null;
      }>;
    }>
  >;
}

/** The part of kafkajs' `eachBatch` payload the adapter uses. */
export interface KafkaJsBatchPayload {
  /** The fetched records of one partition. */
  batch: {
    /** Their topic. */
    topic: string;
    /** Their partition. */
    partition: number;
    /** The records, in offset order. */
    messages: KafkaRecord[];
    /** The offset of the batch's last record. */
    lastOffset(): string;
    /** The offset the partition's next record will have. */
    highWatermark: string;
  };
  /** Marks the batch consumed up to `offset`, so fetching moves past it (commits are separate). */
  resolveOffset(offset: string): void;
  /** Whether the batch belongs to an assignment that has ended (a rebalance happened meanwhile). */
  isStale(): boolean;
  /** Heartbeats the group if one is due; throws while the group rebalances (kafkajs then rejoins). */
  heartbeat(): Promise<void>;
}

/** Options of `kafkajsAdapter`. */
export interface KafkaJsAdapterOptions {
  /** Topics (names or patterns) to subscribe to. */
  topics: Array<string | RegExp>;
  /** Where a group without committed offsets starts: `true` earliest, `false` latest. Default false. */
  fromBeginning?: boolean;
  /**
   * A kafkajs admin client (`kafka.admin()`, not yet connected) of the same cluster. With it, a newly
   * assigned partition's commit metadata is read back, so messages that finished above the committed
   * offset before a restart or rebalance are skipped instead of handled again (kafkajs consumers cannot
   * read it themselves). Without it, everything above the committed offset is handled again.
   */
  admin?: KafkaJsAdmin;
}

/**
 * Adapts a kafkajs consumer (created, not yet connected) to the receiver. kafkajs rebalances eagerly
 * and has no revocation callback: its REBALANCING event (emitted before it rejoins) stands for "all
 * partitions are being revoked", GROUP_JOIN carries the new assignment. Offsets are never committed by
 * kafkajs itself (`autoCommit: false`); fetched batches are resolved at once so fetching moves on.
 *
 * kafkajs retries failed requests itself, without telling; once its retries give up it crashes and, for
 * a retriable error (the broker gone), restarts the consumer: each such CRASH is reported as a
 * `'connection'` failure, and each FETCH, HEARTBEAT and GROUP_JOIN as the broker answering again. A
 * crash kafkajs does not restart from, but that an outage causes (the group's coordinator not found
 * while a broker stops or starts) or that it calls retriable (its `restartOnFailure` said no), is
 * reported the same way and restarted here, so `maxUnreachableMs` decides when an outage ends the
 * output, not kafkajs.
 */
export function kafkajsAdapter(
  consumer: KafkaJsConsumer,
  options: KafkaJsAdapterOptions,
): KafkaConsumerAdapter {
  return kafkajsAdapterOf(() => consumer, options);
}

/**
 * `kafkajsAdapter` over a consumer created by `consumerFor` on the first start, when the receiver's
 * `prefetch` is known (to size its fetches).
 */
export function kafkajsAdapterOf(
  consumerFor: (prefetch: number) => KafkaJsConsumer,
  options: KafkaJsAdapterOptions,
): KafkaConsumerAdapter {
  if (!Array.isArray(options?.topics) || options.topics.length === 0) {
    throw new TypeError(
      'kafkajsAdapter: expected `topics` to be a non-empty array of topic names or patterns',
    );
  }
  const fromBeginning = booleanOption('kafkajsAdapter', 'fromBeginning', options.fromBeginning, false);
  const toTopics = (partitions: readonly TopicPartition[]) => {
    const byTopic = new Map<string, number[]>();
    for (const { topic, partition } of partitions) {
      const list = byTopic.get(topic);
      if (list === undefined) byTopic.set(topic, [partition]);
      else list.push(partition);
    }
    return [...byTopic].map(([topic, list]) => ({ topic, partitions: list }));
  };
  /**
   * The consumer group exists, so pause/resume are allowed: from `run` on, except between a crash and
   * the restart's join (kafkajs drops its consumer group when it crashes).
   */
  let started = false;
  /**
   * `close()` was called. A consumer that crashed restarts on a timer kafkajs sets just after reporting
   * the crash, and a restart under way when it is disconnected goes on: either would bring it back into
   * the group after it left, so it is disconnected again whenever it comes back.
   */
  let closed = false;
  /** The consumer, once the first `start` created it. */
  let consumer: KafkaJsConsumer | undefined;
  const disconnectQuietly = (member: KafkaJsConsumer) => member.disconnect().catch(() => undefined);
  const leaveAgain = () =>
    setTimeout(() => {
      if (consumer !== undefined) disconnectQuietly(consumer);
    });
  /** The group, learnt when it is joined (a kafkajs consumer does not expose it otherwise). */
  let groupId: string | null = null;
  /** A restart's connect, subscribe and run, while under way. */
  let running: Promise<void> | undefined;
  /**
   * A restart kafkajs itself makes after a crash it retries, from its timer to the end of its join:
   * ended by the join or by the next crash.
   */
  let ownRestart: { ended: Promise<void>; end: () => void } | null = null;
  const endOwnRestart = () => {
    ownRestart?.end();
    ownRestart = null;
  };
  let restartTimer: ReturnType<typeof setTimeout> | undefined;
  /** The consumer's events are listened to (by the first `start`). */
  let listening = false;
  const admin = options.admin;
  return {
    async start(listener: KafkaConsumerListener) {
      consumer ??= consumerFor(listener.prefetch);
      const member = consumer;
      /** Connects, subscribes and runs the consumer: at the start, and after a crash kafkajs gave up on. */
      const run = async () => {
        await member.connect();
        // Closed while connecting: the close's disconnect came before this connection was made.
        if (closed) return disconnectQuietly(member);
        await member.subscribe({ topics: options.topics, fromBeginning });
        if (closed) return disconnectQuietly(member);
        started = true;
        await member.run({
          autoCommit: false,
          eachBatchAutoResolve: false,
          // Batches of one fetch are handed over side by side, so one held for room (`untilRoom`) keeps no
          // other partition's batch waiting behind it.
          partitionsConsumedConcurrently: CONCURRENT_BATCHES,
          eachBatch: async ({ batch, resolveOffset, isStale, heartbeat }) => {
            // A stale batch belongs to an assignment that has ended; the new owner fetches it again.
            if (isStale() || batch.messages.length === 0) return;
            const behind = BigInt(batch.lastOffset()) + 1n < BigInt(batch.highWatermark);
            const room = listener.batch(
              batch.topic,
              batch.partition,
              batch.messages,
              behind,
              batch.highWatermark,
            );
            resolveOffset(batch.lastOffset());
            if (room !== undefined) await untilRoom(room, heartbeat);
          },
        });
      };
      const restartLater = () => {
        restartTimer = setTimeout(() => {
          if (closed) return;
          running = run().catch(gaveUp);
        }, RESTART_AFTER_MS);
      };
      /** The consumer stopped and nothing restarts it: an outage runs it again later, else the output ends. */
      const gaveUp = (error: unknown) => {
        if (!causedByOutage(error)) {
          listener.failed(error);
          return;
        }
        listener.transportFailed('connection', error);
        restartLater();
      };
      await admin?.connect();
      // Closed while connecting, as for the consumer below.
      if (closed) return admin?.disconnect().catch(() => undefined);
      // A start that an outage failed is tried again (`isOutage`): the consumer is listened to once.
      if (listening) {
        await run();
        return;
      }
      listening = true;
      member.on(member.events.REBALANCING, () => listener.revoking());
      member.on(
        member.events.GROUP_JOIN,
        (event: { payload: { groupId: string; memberAssignment: Record<string, number[]> } }) => {
          endOwnRestart();
          if (closed) {
            leaveAgain();
            return;
          }
          started = true;
          listener.transportRecovered();
          groupId = event.payload.groupId;
          const assigned: TopicPartition[] = [];
          for (const [topic, partitions] of Object.entries(event.payload.memberAssignment)) {
            for (const partition of partitions) assigned.push({ topic, partition });
          }
          listener.assigned(assigned);
        },
      );
      member.on(member.events.CRASH, (event: { payload: { error: unknown; restart: boolean } }) => {
        endOwnRestart();
        if (closed) {
          if (event.payload.restart) leaveAgain();
          return;
        }
        // kafkajs drops its consumer group when it crashes, restarted or not.
        started = false;
        if (event.payload.restart) {
          let end = () => {};
          ownRestart = { ended: new Promise<void>((resolve) => (end = resolve)), end };
          listener.transportFailed('connection', event.payload.error);
        }
        // kafkajs has disconnected the consumer and gives up.
        else gaveUp(event.payload.error);
      });
      member.on(member.events.STOP, () => {
        started = false;
      });
      member.on(member.events.FETCH, () => listener.transportRecovered());
      member.on(member.events.HEARTBEAT, () => listener.transportRecovered());
      await run();
    },
    isOutage: causedByOutage,
    // kafkajs throws on pause/resume before `run` has set the group up (e.g. when start failed): there
    // is nothing being fetched to pause then.
    pause(partitions) {
      if (started) consumer?.pause(toTopics(partitions));
    },
    resume(partitions) {
      if (started) consumer?.resume(toTopics(partitions));
    },
    async commit(offsets: readonly TopicPartitionOffset[]) {
      await consumer?.commitOffsets(
        offsets.map(({ topic, partition, offset, metadata }) => ({
          topic,
          partition,
          offset,
          metadata: metadata ?? null,
        })),
      );
    },
    async committed(partitions) {
      const unknown = (): CommittedOffset[] =>
        partitions.map(({ topic, partition }) => ({ topic, partition, offset: null, metadata: null }));
      if (admin === undefined || groupId === null || partitions.length === 0) return unknown();
      const topics = [...new Set(partitions.map((p) => p.topic))];
      const fetched = await admin.fetchOffsets({ groupId, topics });
      const byId = new Map<string, { offset: string; metadata: string | null }>();
      for (const { topic, partitions: list } of fetched) {
        for (const p of list) byId.set(`${topic}:${p.partition}`, p);
      }
      return partitions.map(({ topic, partition }) => {
        const found = byId.get(`${topic}:${partition}`);
        // kafkajs reports "no committed offset" as -1.
        const offset = found === undefined || found.offset === '-1' ? null : found.offset;
        return { topic, partition, offset, metadata: offset === null ? null : (found?.metadata ?? null) };
      });
    },
    async close() {
      closed = true;
      clearTimeout(restartTimer);
      // A restart under way is let finish first: disconnecting in the middle of its join would leave
      // the member it is joining running, out of reach (kafkajs drops a runner it cannot stop yet).
      await running?.catch(() => undefined);
      // So is a restart of kafkajs' own: its consumer's disconnect forgets a runner still joining, which
      // then fetches on, in the group, until the process ends. Once joined (a macrotask later, when the
      // runner runs), the disconnect stops it and leaves.
      if (ownRestart !== null) {
        let giveUp: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([
          ownRestart.ended,
          new Promise((resolve) => (giveUp = setTimeout(resolve, OWN_RESTART_WAIT_MS))),
        ]);
        clearTimeout(giveUp);
        await new Promise((resolve) => setTimeout(resolve));
      }
      try {
        await consumer?.disconnect();
      } finally {
        await admin?.disconnect();
      }
    },
  };
}

/**
 * The longest `close()` waits for a restart of kafkajs' own to end: its join, or the next crash of an
 * outage (its connection retries, at its default settings, give up well within it).
 */
const OWN_RESTART_WAIT_MS = 30_000;

/** How long after a crash kafkajs gave up on (or a failed restart) the consumer is run again. */
const RESTART_AFTER_MS = 1000;

/**
 * kafkajs errors that a broker outage causes but that it does not call retriable: the group's
 * coordinator not found (a broker stopping or still loading its groups), no broker to ask, or the
 * connection failing under it.
 */
const OUTAGE_ERRORS = new Set([
  'KafkaJSGroupCoordinatorNotFound',
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSBrokerNotFound',
  'KafkaJSNoBrokerAvailableError',
]);

/** Whether `error`, or an error it was caused by, is one an outage causes, or one kafkajs calls retriable. */
function causedByOutage(error: unknown): boolean {
  return causedBy(error, (e) => e.retriable === true || OUTAGE_ERRORS.has(String(e.name)));
}

/** Batches of one fetch handed over at once: beyond it, a batch waits for one held for room. */
const CONCURRENT_BATCHES = 64;

/** How often the group is heartbeaten while a batch waits for room, and for how many beats at most. */
const ROOM_BEAT_MS = 1000;
const ROOM_BEATS = 30;

/**
 * The batch filled its partition's buffer while no other partition flows: fetching waits here until the
 * receiver lets it go on (`KafkaConsumerListener.batch`). kafkajs would otherwise go on fetching the
 * other partitions, long-polling them for its whole `maxWaitTimeInMs` (5 s by default; with every
 * partition paused it sleeps that long), and fetch the resumed partition only then. It heartbeats
 * meanwhile, as kafkajs asks of a long `eachBatch` (a rebalance throws out of it). Bounded: a
 * dispatcher that stays stuck leaves kafkajs to its own loop.
 */
async function untilRoom(room: Promise<void>, heartbeat: () => Promise<void>): Promise<void> {
  const hasRoom = room.then(() => true);
  for (let beat = 0; beat < ROOM_BEATS; beat++) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const beatDue = new Promise<false>((resolve) => (timer = setTimeout(resolve, ROOM_BEAT_MS, false)));
    const done = await Promise.race([hasRoom, beatDue]);
    clearTimeout(timer);
    if (done) return;
    await heartbeat();
  }
}
