import { keyedDispatch, retryPolicy } from 'keyed-dispatch';
import { fromKafka, type KafkaMessage, type KafkaReceiverOptions, kafkaKey } from 'keyed-dispatch/kafka';
import { lastValueFrom } from 'rxjs';
import { deferred, waitFor } from '../support/waits';
import { ADAPTERS, type ClientAdapter } from './adapters';
import { kafka, offsets, QUICK_GROUP, unique } from './broker';
import { decode, type Event, useEventTopics } from './events';

jest.setTimeout(90_000);

const eventTopics = useEventTopics('commits');
const topicWith = eventTopics.topicWith;

/**
 * Runs one member of `groupId` until `until(handled)` holds, then closes it without waiting for running
 * messages (as a crash right after a commit would leave things). Handlers of `blockedKey` never finish;
 * those of events `failing` accepts throw, and the failure policy gives up on them at once (they settle
 * as failed and, by default, wait for redelivery).
 */
async function runMember(
  kind: ClientAdapter,
  groupId: string,
  topic: string,
  options: KafkaReceiverOptions,
  until: (handled: Event[]) => boolean,
  blockedKey?: string,
  failing: (event: Event) => boolean = () => false,
): Promise<Event[]> {
  const receiver = kind.receiver(groupId, [topic], { closeTimeoutMs: 0, ...options });
  const handled: Event[] = [];
  const never = deferred();
  const output = lastValueFrom(
    receiver.pipe(
      keyedDispatch<KafkaMessage, string, void>({
        key: kafkaKey,
        maxInFlight: 64,
        handle: async (m) => {
          const event = decode(m);
          if (event.key === blockedKey) await never.promise;
          if (failing(event)) throw new Error(`${event.key}#${event.seq} failed`);
          handled.push(event);
        },
        failurePolicy: retryPolicy({ maxAttempts: 1 }),
      }),
    ),
    { defaultValue: undefined },
  );
  await waitFor(() => until(handled));
  await receiver.commit();
  await receiver.close();
  const result = [...handled];
  // The blocked handlers may end now: the member has left, so their outcome reaches no commit.
  never.resolve();
  await output;
  return result;
}

/** Each key's sequence numbers in the order they were handled. */
function byKey(events: Event[]): Map<string, number[]> {
  const map = new Map<string, number[]>();
  for (const { key, seq } of events) map.set(key, [...(map.get(key) ?? []), seq]);
  return map;
}

/**
 * A member that finished all but k0's messages commits; the next (on `next`'s client) handles k0's alone,
 * in order.
 */
async function finishedAboveCommitIsSkipped(kind: ClientAdapter, next = kind): Promise<void> {
  // k0's first message never finishes, so the committed offset stays at 0 while the others finish.
  const topic = await topicWith(1, 200, 20);
  const groupId = unique('group');
  const first = await runMember(kind, groupId, topic, {}, (h) => h.length === 190, 'k0');
  expect(first.some((e) => e.key === 'k0')).toBe(false);
  expect((await offsets(eventTopics.client, groupId, topic)).committed.get(0)).toBe('0');

  const second = await runMember(next, groupId, topic, {}, (h) => h.length >= 10);
  // Give anything that would be redelivered by mistake the time to arrive.
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(second).toEqual(Array.from({ length: 10 }, (_, seq) => ({ key: 'k0', seq })));
  const { committed, end } = await offsets(eventTopics.client, groupId, topic);
  expect(committed).toEqual(end);
}

describe.each(ADAPTERS)('Kafka commits on $name with a real broker', (kind) => {
  it('after a restart, messages that finished above the committed offset are not handled again; per-key order is kept', () =>
    finishedAboveCommitIsSkipped(kind));

  it('without commit metadata, everything above the committed offset is handled again, each key in order', async () => {
    const topic = await topicWith(1, 200, 20);
    const groupId = unique('group');
    const plain = { commitMetadataMaxBytes: 0 };
    await runMember(kind, groupId, topic, plain, (h) => h.length === 190, 'k0');
    const second = await runMember(kind, groupId, topic, plain, (h) => h.length === 200);
    for (const [key, seqs] of byKey(second))
      expect([key, seqs]).toEqual([key, Array.from({ length: 10 }, (_, i) => i)]);
  });

  it('after a restart, a message that failed and waits for redelivery is handled again before the later messages of its key', async () => {
    // k0#0 fails (the policy gives up: it settles as failed, to be redelivered); k0#1… finish after it.
    // Recording those as finished would have the next owner run k0#0 alone: k0's effects out of order.
    const topic = await topicWith(1, 40, 4);
    const groupId = unique('group');
    const failing = (e: Event) => e.key === 'k0' && e.seq === 0;
    const first = await runMember(kind, groupId, topic, {}, (h) => h.length === 39, undefined, failing);
    expect(first.some(failing)).toBe(false);
    expect((await offsets(eventTopics.client, groupId, topic)).committed.get(0)).toBe('0');

    const late = Date.now() + 5_000;
    const second = await runMember(kind, groupId, topic, {}, (h) => h.length === 40 || Date.now() > late);
    // Everything above the failed message is handled again, each key in order (as with plain commits).
    const tenInOrder = Array.from({ length: 10 }, (_, i) => i);
    for (const key of ['k0', 'k1', 'k2', 'k3'])
      expect([key, byKey(second).get(key)]).toEqual([key, tenInOrder]);
  });

  it('commits once commitEveryMessages have finished, without waiting for the interval', async () => {
    const topic = await topicWith(1, 100, 10);
    const groupId = unique('group');
    const receiver = kind.receiver(groupId, [topic], { commitIntervalMs: 600_000, commitEveryMessages: 10 });
    const subscription = receiver
      .pipe(keyedDispatch<KafkaMessage, string, void>({ key: kafkaKey, handle: async () => {} }))
      .subscribe();
    await waitFor(async () => (await offsets(eventTopics.client, groupId, topic)).committed.get(0) === '100');
    subscription.unsubscribe();
    await receiver.close();
  });
});

describe.each(ADAPTERS)('A Kafka adapter on $name with a real broker', (kind) => {
  it('rejects a commit the broker refuses, and reads a commit at offset 0 back with its metadata as written', async () => {
    const topic = await topicWith(1, 1, 1);
    const groupId = unique('group');
    const adapter = kind.adapter(groupId, [topic]);
    const assigned = deferred();
    await adapter.start({
      prefetch: 10,
      batch: () => undefined,
      revoking: async () => {},
      assigned: (partitions) => partitions.length > 0 && assigned.resolve(),
      failed: () => {},
      transportFailed: () => {},
      transportRecovered: () => {},
    });
    try {
      await assigned.promise;
      // Above the broker's offset.metadata.max.bytes (4096).
      const tooLong = { topic, partition: 0, offset: '0', metadata: 'x'.repeat(5000) };
      await expect(adapter.commit([tooLong])).rejects.toThrow();
      await adapter.commit([{ topic, partition: 0, offset: '0', metadata: 'kd2:0:AQI=' }]);
      expect(await adapter.committed([{ topic, partition: 0 }])).toEqual([
        { topic, partition: 0, offset: '0', metadata: 'kd2:0:AQI=' },
      ]);
    } finally {
      await adapter.close();
    }
  });
});

const confluentKind = ADAPTERS.find((a) => a.member === 'confluent');
const onConfluent = confluentKind === undefined ? describe.skip : describe;
onConfluent('A Kafka group whose members run on kafkajs and on @confluentinc/kafka-javascript', () => {
  const kafkajs = ADAPTERS.find((a) => a.name === 'kafkajs') as ClientAdapter;
  const confluent = confluentKind as ClientAdapter;

  it("skips what a kafkajs member's commit metadata records as finished", () =>
    finishedAboveCommitIsSkipped(kafkajs, confluent));

  it("skips what a Confluent member's commit metadata records as finished", () =>
    finishedAboveCommitIsSkipped(confluent, kafkajs));
});

describe('Kafka commits on kafkajs given the client, with no admin client passed', () => {
  const kafkajs = ADAPTERS.find((a) => a.name === 'kafkajs') as ClientAdapter;
  const fromClient: ClientAdapter = {
    ...kafkajs,
    receiver: (groupId, topics, options) =>
      fromKafka({
        kafka: kafka('commits-spec'),
        group: { groupId, ...QUICK_GROUP },
        topics,
        fromBeginning: true,
        ...options,
      }),
  };

  it('reads commit metadata back: messages that finished above the committed offset are not handled again', () =>
    finishedAboveCommitIsSkipped(fromClient));
});
