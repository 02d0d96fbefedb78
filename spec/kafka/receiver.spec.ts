import { Admin } from '@platformatic/kafka';
import { DispatchStats, keyedDispatch, retryPolicy } from 'keyed-dispatch';
import {
  type KafkaMessage,
  KafkaReceiver,
  kafkajsAdapter,
  kafkaKey,
  platformaticAdapter,
} from 'keyed-dispatch/kafka';
import { lastValueFrom } from 'rxjs';
import { type Deferred, deferred, waitFor } from '../support/waits';
import { ADAPTERS, type ClientAdapter, platformaticConsumer } from './adapters';
import { BROKER, createTopic, kafka, offsets, unique } from './broker';
import { decode, type Event, useEventTopics } from './events';
import { observedReceiver } from './observed-adapter';

jest.setTimeout(60_000);

const eventTopics = useEventTopics('orders');
const topicWith = eventTopics.topicWith;

function receiverOf(
  kind: ClientAdapter,
  groupId: string,
  topic: string | string[],
  options: ConstructorParameters<typeof KafkaReceiver>[1] = {},
) {
  return observedReceiver(kind, groupId, Array.isArray(topic) ? topic : [topic], options);
}

/** Resolves when `count()` reaches `target`; `check()` is called after every change. */
function counter(target: number): { done: Deferred<void>; add(): void; value(): number } {
  let n = 0;
  const done = deferred();
  return {
    done,
    add() {
      if (++n === target) done.resolve();
    },
    value: () => n,
  };
}

/** Pipes `receiver` into keyedDispatch and keeps every message handled; `output` ends with it. */
function collect(receiver: KafkaReceiver, key: (m: KafkaMessage) => string = kafkaKey) {
  const received: KafkaMessage[] = [];
  const output = lastValueFrom(
    receiver.pipe(
      keyedDispatch<KafkaMessage, string, void>({
        key,
        handle: async (m) => {
          received.push(m);
        },
      }),
    ),
    { defaultValue: undefined },
  );
  return { received, output };
}

describe.each(ADAPTERS)('KafkaReceiver on $name with a real broker', (kind) => {
  it('delivers every message to keyedDispatch in per-key order, and close() commits the end offsets and completes', async () => {
    const topic = await topicWith(4, 2000, 50);
    const groupId = unique('group');
    const receiver = kind.receiver(groupId, [topic]);
    const seen = new Map<string, number[]>();
    const all = counter(2000);
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch<KafkaMessage, string, Event>({
          key: kafkaKey,
          handle: async (m) => {
            const e = decode(m);
            await Promise.resolve();
            const list = seen.get(e.key) ?? [];
            list.push(e.seq);
            seen.set(e.key, list);
            all.add();
            return e;
          },
        }),
      ),
    );
    await all.done.promise;
    await receiver.close();
    await output;
    expect(seen.size).toBe(50);
    for (const list of seen.values()) expect(list).toEqual(list.map((_, i) => i));
    const { committed, end } = await offsets(eventTopics.client, groupId, topic);
    expect(committed).toEqual(end);
  });

  it("hands over each record's key, value, headers and timestamp as sent: a tombstone's value as null, an empty key or value as no bytes", async () => {
    const topic = unique('records');
    await createTopic(eventTopics.client, topic, 1);
    await eventTopics.producer.send({
      topic,
      messages: [
        { key: 'a', value: 'v', headers: { h: ['x', 'y'], one: 'z' }, timestamp: '1700000000123' },
        { key: 'a', value: null },
        { key: 'a', value: '' },
        { key: '', value: 'an empty key' },
      ],
    });
    const receiver = kind.receiver(unique('group'), [topic]);
    const { received, output } = collect(receiver, (m) => m.key?.toString() ?? 'none');
    await waitFor(() => received.length === 4);
    await receiver.close();
    await output;
    const text = (bytes: unknown) => (bytes === null ? null : String(bytes));
    received.sort((a, b) => Number(a.offset) - Number(b.offset));
    expect(received.map((m) => [m.offset, text(m.key), text(m.value)])).toEqual([
      ['0', 'a', 'v'],
      ['1', 'a', null],
      ['2', 'a', ''],
      ['3', '', 'an empty key'],
    ]);
    const { headers, timestamp } = received[0];
    expect(timestamp).toBe('1700000000123');
    expect(Object.keys(headers).sort()).toEqual(['h', 'one']);
    expect([headers.h].flat().map(text)).toEqual(['x', 'y']);
    expect(text(headers.one)).toBe('z');
  });

  it('starts a partition whose committed offset is no longer in the log at the earliest one there', async () => {
    const topic = await topicWith(1, 100, 10);
    const groupId = unique('group');
    // The group committed offset 10, then the records below 50 were deleted.
    const admin = new Admin({ clientId: 'receiver-spec', bootstrapBrokers: [BROKER] });
    try {
      await admin.alterConsumerGroupOffsets({
        groupId,
        topics: [{ name: topic, partitionOffsets: [{ partition: 0, offset: 10n }] }],
      });
      await admin.deleteRecords({ topics: [{ name: topic, partitions: [{ partition: 0, offset: 50n }] }] });
    } finally {
      await admin.close();
    }
    const receiver = kind.receiver(groupId, [topic]);
    const { received, output } = collect(receiver);
    await waitFor(() => received.length >= 50);
    await receiver.close();
    await output;
    const handled = received.map((m) => Number(m.offset)).sort((a, b) => a - b);
    expect(handled).toEqual(Array.from({ length: 50 }, (_, i) => 50 + i));
    expect((await offsets(eventTopics.client, groupId, topic)).committed.get(0)).toBe('100');
  });

  it('never holds more than the window, pauses a partition whose buffer is full and resumes it as the window frees', async () => {
    const topic = await topicWith(1, 400, 400);
    const { adapter, receiver } = receiverOf(kind, unique('group'), topic, { prefetch: 20 });
    const gate = deferred();
    const stats = new DispatchStats();
    const started = counter(8);
    const all = counter(400);
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch<KafkaMessage, string, void>({
          key: kafkaKey,
          maxInFlight: 8,
          stats,
          handle: async () => {
            started.add();
            await gate.promise;
            all.add();
          },
        }),
      ),
      { defaultValue: undefined },
    );
    await started.done.promise;
    await adapter.next((e) => e.kind === 'pause');
    expect(stats.snapshot().inFlight).toBe(8);
    expect(started.value()).toBe(8);
    const pausedAt = adapter.events.length;
    gate.resolve();
    await adapter.next((e) => e.kind === 'resume', pausedAt);
    await all.done.promise;
    expect(stats.snapshot().maxInFlightSeen).toBe(8);
    await receiver.close();
    await output;
  });

  it('holds only the partition of a hot key whose messages park, while the other partitions keep flowing', async () => {
    const topic = unique('hot');
    await createTopic(eventTopics.client, topic, 2);
    // The hot key's messages on partition 0; cold keys on partition 1.
    const messages = [];
    for (let n = 0; n < 100; n++) {
      messages.push({ key: 'hot', value: JSON.stringify({ key: 'hot', seq: n }), partition: 0 });
      messages.push({
        key: `cold${n % 10}`,
        value: JSON.stringify({ key: `cold${n % 10}`, seq: n }),
        partition: 1,
      });
    }
    await eventTopics.producer.send({ topic, messages });
    const { adapter, receiver } = receiverOf(kind, unique('group'), topic);
    const gate = deferred();
    const stats = new DispatchStats();
    const hot: number[] = [];
    const cold = counter(100);
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch<KafkaMessage, string, void>({
          key: kafkaKey,
          maxInFlight: 16,
          maxPerKey: 4,
          maxParked: 32,
          stats,
          handle: async (m) => {
            const e = decode(m);
            if (e.key !== 'hot') return cold.add();
            await gate.promise;
            hot.push(e.seq);
          },
        }),
      ),
      { defaultValue: undefined },
    );
    await adapter.next((e) => e.kind === 'pause' && e.partitions.some((p) => p.partition === 0));
    // Every cold message finishes while the hot key's partition is held.
    await cold.done.promise;
    expect(hot).toEqual([]);
    const pauses = adapter.events.filter((e) => e.kind === 'pause');
    expect(pauses.flatMap((e) => (e.kind === 'pause' ? e.partitions.map((p) => p.partition) : []))).toEqual([
      0,
    ]);
    expect(stats.snapshot().parked).toBeGreaterThan(0);
    expect(stats.snapshot().parked).toBeLessThanOrEqual(32);
    const heldAt = adapter.events.length;
    gate.resolve();
    await adapter.next((e) => e.kind === 'resume' && e.partitions.some((p) => p.partition === 0), heldAt);
    await waitFor(() => hot.length === 100);
    expect(hot).toEqual(Array.from({ length: 100 }, (_, i) => i));
    await receiver.close();
    await output;
  });

  it('commits only up to the highest contiguous finished offset of a partition', async () => {
    const topic = await topicWith(1, 10, 10); // offsets 0..9, keys k0..k9
    const groupId = unique('group');
    const { receiver } = receiverOf(kind, groupId, topic);
    const slow = deferred();
    const stats = new DispatchStats();
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch<KafkaMessage, string, void>({
          key: kafkaKey,
          handle: async (m) => {
            if (m.offset === '1') await slow.promise;
          },
          stats,
        }),
      ),
      { defaultValue: undefined },
    );
    // Every message but offset 1 finished (settled, not only run).
    await waitFor(() => stats.snapshot().settled === 9);
    await receiver.commit();
    expect((await offsets(eventTopics.client, groupId, topic)).committed.get(0)).toBe('1');
    slow.resolve();
    await receiver.close();
    await output;
    expect((await offsets(eventTopics.client, groupId, topic)).committed.get(0)).toBe('10');
  });

  it('starts the commits commitEveryMessages triggers at least 10 ms apart, and commits everything in the end', async () => {
    const topic = await topicWith(1, 2000, 50);
    const groupId = unique('group');
    const { adapter, receiver } = receiverOf(kind, groupId, topic, {
      commitIntervalMs: 600_000,
      commitEveryMessages: 1,
    });
    const stats = new DispatchStats();
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch<KafkaMessage, string, void>({ key: kafkaKey, handle: async () => {}, stats }),
      ),
      { defaultValue: undefined },
    );
    await waitFor(() => stats.snapshot().settled === 2000);
    await waitFor(() => adapter.commitStarts.length >= 2);
    const gaps = adapter.commitStarts.slice(1).map((at, i) => at - adapter.commitStarts[i]);
    expect(gaps.length).toBeGreaterThan(0);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(10);
    await receiver.close();
    await output;
    expect((await offsets(eventTopics.client, groupId, topic)).committed.get(0)).toBe('2000');
  });

  // Eager rebalancing revokes every partition; the incremental protocol is spec'd below.
  const eagerIt = kind.holdsRevokes ? it.skip : it;
  eagerIt(
    'on a rebalance, drops the revoked partitions’ queued messages unacknowledged, and the group still handles every message',
    async () => {
      const topic = await topicWith(2, 400, 4);
      const groupId = unique('group');
      const a = receiverOf(kind, groupId, topic, { revokeTimeoutMs: 20_000, prefetch: 10 });
      const b = receiverOf(kind, groupId, topic);
      const handled = new Map<string, Set<number>>();
      const distinct = counter(400);
      const record = (e: Event) => {
        const set = handled.get(e.key) ?? new Set<number>();
        if (!set.has(e.seq)) distinct.add();
        set.add(e.seq);
        handled.set(e.key, set);
      };
      // A's first message blocks, so its key's later messages queue behind it in A's mailbox.
      const blocked = deferred();
      const firstStarted = deferred();
      let first = true;
      const statsA = new DispatchStats();
      const outA = lastValueFrom(
        a.receiver.pipe(
          keyedDispatch<KafkaMessage, string, void>({
            key: kafkaKey,
            maxInFlight: 64,
            stats: statsA,
            handle: async (m) => {
              if (first) {
                first = false;
                firstStarted.resolve();
                await blocked.promise;
              }
              record(decode(m));
            },
          }),
        ),
        { defaultValue: undefined },
      );
      await firstStarted.promise;
      await a.adapter.next((e) => e.kind === 'pause');
      expect(statsA.snapshot().inFlight).toBeGreaterThan(1);

      const outB = lastValueFrom(
        b.receiver.pipe(
          keyedDispatch<KafkaMessage, string, void>({
            key: kafkaKey,
            handle: async (m) => record(decode(m)),
          }),
        ),
        { defaultValue: undefined },
      );
      await a.adapter.next((e) => e.kind === 'revoking');
      // Only the running message is left in A's window: the queued ones were dropped, not settled.
      expect(statsA.snapshot().inFlight).toBe(1);
      blocked.resolve();

      await distinct.done.promise;
      // Work redone after the rebalance (a revoke's last commit can miss the generation that ended)
      // is committed by its new owner on its cadence: the group's commits reach the end while both run.
      const deadline = Date.now() + 20_000;
      let positions = await offsets(eventTopics.client, groupId, topic);
      while (!sameOffsets(positions.committed, positions.end) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        positions = await offsets(eventTopics.client, groupId, topic);
      }
      await Promise.all([a.receiver.close(), b.receiver.close()]);
      await Promise.all([outA, outB]);
      for (const seqs of handled.values()) expect(seqs.size).toBe(100);
      const { committed, end } = await offsets(eventTopics.client, groupId, topic);
      expect(committed).toEqual(end);
    },
  );

  it.each([
    ['redeliver', 'stops commits below it, so it is delivered again', '1'],
    ['ack', 'lets commits pass it', '3'],
  ] as const)(
    "onFailed '%s': a message the failure policy gave up on is settled as failed, told to onSettled, and %s",
    async (onFailed, _, committedAfter) => {
      const topic = await topicWith(1, 3, 3); // offsets 0..2, keys k0..k2
      const groupId = unique('group');
      const outcomes: string[] = [];
      const all = counter(3);
      const { receiver } = receiverOf(kind, groupId, topic, {
        onFailed,
        onSettled: (m, outcome) => {
          outcomes.push(`${m.offset}:${outcome}`);
          all.add();
        },
      });
      const output = lastValueFrom(
        receiver.pipe(
          keyedDispatch<KafkaMessage, string, void>({
            key: kafkaKey,
            failurePolicy: retryPolicy({ maxAttempts: 1 }),
            handle: async (m) => {
              if (m.offset === '1') throw new Error('boom');
            },
          }),
        ),
        { defaultValue: undefined },
      );
      await all.done.promise;
      await receiver.close();
      await output;
      expect(outcomes.sort()).toEqual(['0:done', '1:failed', '2:done']);
      expect((await offsets(eventTopics.client, groupId, topic)).committed.get(0)).toBe(committedAfter);
    },
  );

  it('reads several topics with one receiver, and a stalled window pauses every one of them within moments of each other', async () => {
    const topics = [await topicWith(1, 100, 10), await topicWith(2, 100, 10)];
    const groupId = unique('group');
    const { adapter, receiver } = receiverOf(kind, groupId, topics, { prefetch: 10 });
    const gate = deferred();
    const seen = new Map<string, number[]>();
    const all = counter(200);
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch<KafkaMessage, string, void>({
          key: (m) => `${m.topic}/${kafkaKey(m)}`,
          maxInFlight: 4,
          handle: async (m) => {
            await gate.promise;
            const e = decode(m);
            const id = `${m.topic}/${e.key}`;
            seen.set(id, [...(seen.get(id) ?? []), e.seq]);
            all.add();
          },
        }),
      ),
      { defaultValue: undefined },
    );
    // Nothing finishes, so every partition of both topics fills its buffer and pauses.
    const pausedAt: number[] = [];
    const paused = async (topic: string, partition: number) => {
      await adapter.next(
        (e) => e.kind === 'pause' && e.partitions.some((p) => p.topic === topic && p.partition === partition),
      );
      pausedAt.push(Date.now());
    };
    await Promise.all([paused(topics[0], 0), paused(topics[1], 0), paused(topics[1], 1)]);
    // A full partition's records do not hold back the others': they fill within a few fetches of each
    // other (at once on most clients; 9 s apart when each full batch waited out a room wait).
    expect(Math.max(...pausedAt) - Math.min(...pausedAt)).toBeLessThan(2500);
    gate.resolve();
    await all.done.promise;
    await receiver.close();
    await output;
    expect(seen.size).toBe(20);
    for (const list of seen.values()) expect(list).toEqual(list.map((_, i) => i));
    for (const topic of topics) {
      const { committed, end } = await offsets(eventTopics.client, groupId, topic);
      expect(committed).toEqual(end);
    }
  });
});

/** Produces `count` messages to each partition, one key per partition (`p0`, `p1`, ...), so each is in order behind its first. */
async function perPartitionTopic(partitions: number, count: number): Promise<string> {
  const topic = unique('moves');
  await createTopic(eventTopics.client, topic, partitions);
  const messages = [];
  for (let partition = 0; partition < partitions; partition++) {
    for (let seq = 0; seq < count; seq++) {
      const key = `p${partition}`;
      messages.push({ key, value: JSON.stringify({ key, seq }), partition });
    }
  }
  await eventTopics.producer.send({ topic, messages });
  return topic;
}

interface Run {
  member: string;
  partition: number;
  offset: number;
  start: number;
  end: number;
}

describe.each(ADAPTERS.filter((kind) => kind.holdsRevokes))(
  'KafkaReceiver on $name with the consumer rebalance protocol (KIP-848)',
  (kind) => {
    /** A member whose handler holds offset 0 of each partition until that partition's gate opens. */
    function member(
      name: string,
      groupId: string,
      topic: string,
      runs: Run[],
      gates: Map<number, Deferred<void>>,
      options = {},
    ) {
      const { adapter, receiver } = receiverOf(kind, groupId, topic, options);
      const started = new Map<number, Deferred<void>>();
      const startedOf = (p: number) => started.get(p) ?? started.set(p, deferred()).get(p)!;
      const output = lastValueFrom(
        receiver.pipe(
          keyedDispatch<KafkaMessage, string, void>({
            key: kafkaKey,
            handle: async (m) => {
              const start = Date.now();
              startedOf(m.partition).resolve();
              if (m.offset === '0') await gates.get(m.partition)?.promise;
              runs.push({
                member: name,
                partition: m.partition,
                offset: Number(m.offset),
                start,
                end: Date.now(),
              });
            },
          }),
        ),
        { defaultValue: undefined },
      );
      return { adapter, receiver, output, started: startedOf };
    }

    it('a revoke waits for the revoked partitions’ running messages before the new owner gets them, while the partitions that stay keep flowing', async () => {
      const PARTITIONS = 4;
      const topic = await perPartitionTopic(PARTITIONS, 5);
      const groupId = unique('group');
      const runs: Run[] = [];
      const gates = new Map(Array.from({ length: PARTITIONS }, (_, p) => [p, deferred()]));
      const a = member('a', groupId, topic, runs, gates, { revokeTimeoutMs: 20_000 });
      // A runs offset 0 of every partition and holds it.
      await Promise.all(Array.from({ length: PARTITIONS }, (_, p) => a.started(p).promise));
      const b = member('b', groupId, topic, runs, new Map());
      await a.adapter.next((e) => e.kind === 'revoking');
      const revoking = a.adapter.events.find((e) => e.kind === 'revoking');
      const revoked = (revoking?.kind === 'revoking' ? (revoking.partitions ?? []) : []).map(
        (p) => p.partition,
      );
      expect(revoked.length).toBeGreaterThan(0);
      expect(revoked.length).toBeLessThan(PARTITIONS);
      const kept = Array.from({ length: PARTITIONS }, (_, p) => p).filter((p) => !revoked.includes(p));

      // The partitions A keeps flow while the revoke waits: their held messages finish, the rest follow,
      // and more produced now is fetched and handled too (librdkafka fetches nothing more meanwhile: what
      // it had fetched still runs).
      for (const p of kept) gates.get(p)?.resolve();
      const fetchedDuringRevoke = kind.pausesKeptDuringRevoke ? 5 : 7;
      if (!kind.pausesKeptDuringRevoke) {
        await eventTopics.producer.send({
          topic,
          messages: kept.flatMap((partition) =>
            [5, 6].map((seq) => ({
              key: `p${partition}`,
              value: JSON.stringify({ key: `p${partition}`, seq }),
              partition,
            })),
          ),
        });
      }
      await waitFor(() =>
        kept.every((p) => runs.filter((r) => r.partition === p).length === fetchedDuringRevoke),
      );
      // Meanwhile the revoked partitions went nowhere: A holds their running message, B has none of them.
      expect(runs.filter((r) => revoked.includes(r.partition))).toEqual([]);
      expect(
        b.adapter.events.some(
          (e) => e.kind === 'assigned' && e.partitions.some((p) => revoked.includes(p.partition)),
        ),
      ).toBe(false);

      for (const p of revoked) gates.get(p)?.resolve();
      await waitFor(() => revoked.every((p) => runs.some((r) => r.partition === p && r.offset === 4)));
      for (const p of revoked) {
        const onA = runs.filter((r) => r.partition === p && r.member === 'a');
        const onB = runs.filter((r) => r.partition === p && r.member === 'b');
        // A finished the running message; its queued ones were dropped, and B took over after it.
        expect(onA.map((r) => r.offset)).toEqual([0]);
        expect(onB.map((r) => r.offset)).toEqual([1, 2, 3, 4]);
        expect(onB[0].start).toBeGreaterThanOrEqual(onA[0].end);
      }
      await Promise.all([a.receiver.close(), b.receiver.close()]);
      await Promise.all([a.output, b.output]);
      const { committed, end } = await offsets(eventTopics.client, groupId, topic);
      expect(committed).toEqual(end);
    });

    it('a revoke lets the partitions go after revokeTimeoutMs even while a message still runs, and the new owner runs it again', async () => {
      const PARTITIONS = 2;
      const topic = await perPartitionTopic(PARTITIONS, 3);
      const groupId = unique('group');
      const runs: Run[] = [];
      const gates = new Map(Array.from({ length: PARTITIONS }, (_, p) => [p, deferred()]));
      const a = member('a', groupId, topic, runs, gates, { revokeTimeoutMs: 300 });
      await Promise.all(Array.from({ length: PARTITIONS }, (_, p) => a.started(p).promise));
      const b = member('b', groupId, topic, runs, new Map());
      await a.adapter.next((e) => e.kind === 'revoking');
      const revoking = a.adapter.events.find((e) => e.kind === 'revoking');
      const [moved] = (revoking?.kind === 'revoking' ? (revoking.partitions ?? []) : []).map(
        (p) => p.partition,
      );
      // B gets the partition while A's message on it still runs, and handles it from offset 0.
      await waitFor(() => runs.some((r) => r.member === 'b' && r.partition === moved && r.offset === 2));
      expect(runs.filter((r) => r.partition === moved).map((r) => `${r.member}${r.offset}`)).toEqual([
        'b0',
        'b1',
        'b2',
      ]);
      for (const gate of gates.values()) gate.resolve();
      await waitFor(() => runs.some((r) => r.member === 'a' && r.partition === moved));
      await Promise.all([a.receiver.close(), b.receiver.close()]);
      await Promise.all([a.output, b.output]);
    });
  },
);

describe.each(ADAPTERS)('KafkaReceiver options on $name', (kind) => {
  it('rejects invalid options, naming the option, the value and its type', () => {
    const adapter = kind.adapter('unused', ['t']);
    expect(() => new KafkaReceiver(adapter, { prefetch: 0 })).toThrow(
      'KafkaReceiver: expected `prefetch` to be an integer >= 1, got 0 (number)',
    );
    expect(() => new KafkaReceiver(adapter, { commitIntervalMs: 1.5 })).toThrow(
      'KafkaReceiver: expected `commitIntervalMs` to be an integer from 1 to 2147483647, got 1.5 (number)',
    );
    expect(() => new KafkaReceiver(adapter, { commitEveryMessages: 0 })).toThrow(
      'KafkaReceiver: expected `commitEveryMessages` to be an integer >= 1, got 0 (number)',
    );
    expect(() => new KafkaReceiver(adapter, { commitMetadataMaxBytes: '4k' as never })).toThrow(
      "KafkaReceiver: expected `commitMetadataMaxBytes` to be an integer >= 0, got '4k' (string)",
    );
    expect(() => new KafkaReceiver(adapter, { onFailed: 'nak' as never })).toThrow(
      "KafkaReceiver: expected `onFailed` to be 'redeliver' or 'ack', got 'nak' (string)",
    );
    expect(() => new KafkaReceiver(adapter, { onSettled: 1 as never })).toThrow(
      'KafkaReceiver: expected `onSettled` to be a function, got 1 (number)',
    );
    expect(() => new KafkaReceiver(adapter, { onTransportError: 'log' as never })).toThrow(
      "KafkaReceiver: expected `onTransportError` to be a function, got 'log' (string)",
    );
    expect(() => new KafkaReceiver(adapter, { maxUnreachableMs: 0 })).toThrow(
      'KafkaReceiver: expected `maxUnreachableMs` to be an integer from 1 to 2147483647, got 0 (number)',
    );
  });
});

describe('Kafka adapters', () => {
  it('reject an empty topic list and a bad fetch wait, naming the option', () => {
    expect(() => kafkajsAdapter(kafka('options').consumer({ groupId: 'unused' }), { topics: [] })).toThrow(
      '`topics`',
    );
    expect(() => platformaticAdapter(platformaticConsumer('unused'), { topics: [] })).toThrow('`topics`');
    expect(() =>
      platformaticAdapter(platformaticConsumer('unused'), { topics: ['t'], maxWaitMs: -1 }),
    ).toThrow('platformaticAdapter: expected `maxWaitMs` to be an integer >= 0, got -1 (number)');
  });

  it('reject a `fromBeginning` that is not a boolean (a string from the environment would read the topic from its start)', () => {
    expect(() =>
      kafkajsAdapter(kafka('options').consumer({ groupId: 'unused' }), {
        topics: ['t'],
        fromBeginning: 'false' as never,
      }),
    ).toThrow("kafkajsAdapter: expected `fromBeginning` to be a boolean, got 'false' (string)");
    expect(() =>
      platformaticAdapter(platformaticConsumer('unused'), { topics: ['t'], fromBeginning: 0 as never }),
    ).toThrow('platformaticAdapter: expected `fromBeginning` to be a boolean, got 0 (number)');
    expect(() =>
      kafkajsAdapter(kafka('options').consumer({ groupId: 'unused' }), {
        topics: ['t'],
        fromBeginning: true,
      }),
    ).not.toThrow();
  });
});

function sameOffsets(a: Map<number, string>, b: Map<number, string>): boolean {
  return a.size === b.size && [...a].every(([partition, offset]) => b.get(partition) === offset);
}

describe.each(ADAPTERS)(
  'KafkaReceiver on $name when a partition moves while its message still runs',
  (kind) => {
    it("a revoke that gives up waiting does not commit the partition back below its new owner's commits", async () => {
      // Each partition: a slow key's message at offset 0, then a fast key's at 1–4.
      const topic = unique('moves');
      await createTopic(eventTopics.client, topic, 2);
      await eventTopics.producer.send({
        topic,
        messages: [0, 1].flatMap((partition) =>
          [0, 1, 2, 3, 4].map((seq) => {
            const key = seq === 0 ? `slow${partition}` : `fast${partition}`;
            return { key, value: JSON.stringify({ key, seq }), partition };
          }),
        ),
      });
      const groupId = unique('group');
      const gate = deferred();
      let finished = 0;
      // A holds offset 0 of both partitions and finishes the rest; it commits nothing yet (none is due).
      const a = receiverOf(kind, groupId, topic, {
        revokeTimeoutMs: 5000,
        commitIntervalMs: 600_000,
        commitEveryMessages: 1000,
      });
      const aOutput = lastValueFrom(
        a.receiver.pipe(
          keyedDispatch<KafkaMessage, string, void>({
            key: kafkaKey,
            handle: async (m) => {
              if (m.offset === '0') await gate.promise;
              else finished++;
            },
          }),
        ),
        { defaultValue: undefined },
      );
      await waitFor(() => finished === 8);
      // B joins and commits each message it finishes; under the classic protocol it gets its partition
      // while A still waits for the running message there.
      const b = receiverOf(kind, groupId, topic, { commitEveryMessages: 1 });
      const bOutput = lastValueFrom(
        b.receiver.pipe(keyedDispatch<KafkaMessage, string, void>({ key: kafkaKey, handle: async () => {} })),
        { defaultValue: undefined },
      );
      await b.adapter.next((e) => e.kind === 'assigned' && e.partitions.length > 0);
      const assigned = b.adapter.events.find((e) => e.kind === 'assigned' && e.partitions.length > 0);
      const moved = assigned?.kind === 'assigned' ? assigned.partitions[0].partition : -1;
      await waitFor(
        async () => (await offsets(eventTopics.client, groupId, topic)).committed.get(moved) === '5',
      );
      // A gives up waiting (revokeTimeoutMs) and commits what it has of the partition (offset 0, with 1–4
      // finished in the metadata): not over B's 5.
      await waitFor(() => a.adapter.revokesRunning === 0);
      expect((await offsets(eventTopics.client, groupId, topic)).committed.get(moved)).toBe('5');

      gate.resolve();
      await Promise.all([a.receiver.close(), b.receiver.close()]);
      await Promise.all([aOutput, bOutput]);
    }, 60_000);
  },
);
