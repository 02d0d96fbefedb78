import { type Kafka, Partitioners, type Producer } from 'kafkajs';
import { DispatchStats, keyedDispatch, retryPolicy } from 'keyed-dispatch';
import {
  fromKafka,
  type KafkaMessage,
  KafkaReceiver,
  kafkajsAdapter,
  kafkaKey,
  keyedProducer,
} from 'keyed-dispatch/kafka';
import { lastValueFrom } from 'rxjs';
import { type Deferred, deferred } from '../support/scripted-receiver';
import { BROKER_START_MS, createTopic, ensureBroker, kafka, offsets, QUICK_GROUP, unique } from './broker';
import { ObservedAdapter } from './observed-adapter';

jest.setTimeout(60_000);

interface Event {
  key: string;
  seq: number;
}

const decode = (m: KafkaMessage): Event => JSON.parse(m.value!.toString());

let client: Kafka;
let producer: Producer;

beforeAll(async () => {
  await ensureBroker();
  client = kafka('receiver-spec');
  producer = client.producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    idempotent: true,
    maxInFlightRequests: 1,
  });
  await producer.connect();
}, BROKER_START_MS);

afterAll(async () => {
  await producer?.disconnect();
});

/** A topic holding `count` events over `keys` keys, with per-key sequence numbers. */
async function topicWith(partitions: number, count: number, keys: number): Promise<string> {
  const topic = unique('orders');
  await createTopic(client, topic, partitions);
  const send = keyedProducer<Event>(producer, { topic, key: (e) => e.key });
  const next = new Map<string, number>();
  const events: Event[] = [];
  for (let n = 0; n < count; n++) {
    const key = `k${n % keys}`;
    const seq = next.get(key) ?? 0;
    next.set(key, seq + 1);
    events.push({ key, seq });
  }
  for (let i = 0; i < events.length; i += 500) await send.send(events.slice(i, i + 500));
  return topic;
}

function receiverOf(
  groupId: string,
  topic: string,
  options: ConstructorParameters<typeof KafkaReceiver>[1] = {},
) {
  const adapter = new ObservedAdapter(
    kafkajsAdapter(client.consumer({ groupId, ...QUICK_GROUP }), { topics: [topic], fromBeginning: true }),
  );
  return { adapter, receiver: new KafkaReceiver(adapter, options) };
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

/** Resolves once `condition()` holds, checking every 10 ms. */
async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('KafkaReceiver with a real broker', () => {
  it('delivers every message to keyedDispatch in per-key order, and close() commits the end offsets and completes', async () => {
    const topic = await topicWith(4, 2000, 50);
    const groupId = unique('group');
    const receiver = fromKafka({
      consumer: client.consumer({ groupId, ...QUICK_GROUP }),
      topics: [topic],
      fromBeginning: true,
    });
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
    const { committed, end } = await offsets(client, groupId, topic);
    expect(committed).toEqual(end);
  });

  it('never holds more than the window, pauses a partition whose buffer is full and resumes it as the window frees', async () => {
    const topic = await topicWith(1, 400, 400);
    const { adapter, receiver } = receiverOf(unique('group'), topic, { prefetch: 20 });
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
    await createTopic(client, topic, 2);
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
    await producer.send({ topic, messages });
    const { adapter, receiver } = receiverOf(unique('group'), topic);
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
    const { receiver } = receiverOf(groupId, topic);
    const slow = deferred();
    const others = counter(9);
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch<KafkaMessage, string, void>({
          key: kafkaKey,
          handle: async (m) => {
            if (m.offset === '1') await slow.promise;
            else others.add();
          },
        }),
      ),
      { defaultValue: undefined },
    );
    await others.done.promise;
    await receiver.commit();
    expect((await offsets(client, groupId, topic)).committed.get(0)).toBe('1');
    slow.resolve();
    await receiver.close();
    await output;
    expect((await offsets(client, groupId, topic)).committed.get(0)).toBe('10');
  });

  it('on a rebalance, drops the revoked partitions’ queued messages unacknowledged, and the group still handles every message', async () => {
    const topic = await topicWith(2, 400, 4);
    const groupId = unique('group');
    const a = receiverOf(groupId, topic, { revokeTimeoutMs: 20_000, prefetch: 10 });
    const b = receiverOf(groupId, topic);
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
        keyedDispatch<KafkaMessage, string, void>({ key: kafkaKey, handle: async (m) => record(decode(m)) }),
      ),
      { defaultValue: undefined },
    );
    await a.adapter.next((e) => e.kind === 'revoking');
    // Only the running message is left in A's window: the queued ones were dropped, not settled.
    expect(statsA.snapshot().inFlight).toBe(1);
    blocked.resolve();

    await distinct.done.promise;
    await Promise.all([a.receiver.close(), b.receiver.close()]);
    await Promise.all([outA, outB]);
    for (const seqs of handled.values()) expect(seqs.size).toBe(100);
    const { committed, end } = await offsets(client, groupId, topic);
    expect(committed).toEqual(end);
  });

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
      const { receiver } = receiverOf(groupId, topic, {
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
            onFailure: retryPolicy({ maxAttempts: 1 }),
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
      expect((await offsets(client, groupId, topic)).committed.get(0)).toBe(committedAfter);
    },
  );

  it('rejects invalid options, naming the option, the value and its type', () => {
    const adapter = kafkajsAdapter(client.consumer({ groupId: 'unused' }), { topics: ['t'] });
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
    expect(() => kafkajsAdapter(client.consumer({ groupId: 'unused' }), { topics: [] })).toThrow('`topics`');
  });
});
