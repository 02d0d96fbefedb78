import { keyedDispatch } from 'keyed-dispatch';
import { fromKafka, fromPlatformaticKafka, type KafkaMessage, kafkaKey } from 'keyed-dispatch/kafka';
import { lastValueFrom } from 'rxjs';
import { deferred } from '../support/scripted-receiver';
import { platformaticConsumer } from './adapters';
import { createTopic, kafka, QUICK_GROUP, unique, within } from './broker';
import { useEventTopics } from './events';

jest.setTimeout(60_000);

const eventTopics = useEventTopics('fetch-wait');

/** Longer than the spec waits for its messages: a client that idles for its fetch wait fails it. */
const FETCH_WAIT_MS = 20_000;

/**
 * A backlog many times `prefetch`, and a handler slower than fetching, so every partition's buffer
 * fills and every partition pauses, again and again. The clients' fetch wait is longer than the spec
 * waits: when every partition is paused, kafkajs sleeps for it before it looks again (whatever resumes
 * meanwhile), so the receiver must get fetching going again without it. (Closing may still wait it
 * out: a stopped receiver pauses everything.)
 */
const clients = [
  {
    name: 'kafkajs',
    receiver: (groupId: string, topic: string) =>
      fromKafka({
        consumer: kafka('fetch-wait').consumer({
          groupId,
          ...QUICK_GROUP,
          maxWaitTimeInMs: FETCH_WAIT_MS,
          // A few dozen records a fetch, so the backlog takes many fetches.
          maxBytesPerPartition: 4096,
        }),
        topics: [topic],
        fromBeginning: true,
        prefetch: 50,
      }),
  },
  {
    name: '@platformatic/kafka',
    receiver: (groupId: string, topic: string) =>
      fromPlatformaticKafka({
        consumer: platformaticConsumer(groupId),
        topics: [topic],
        fromBeginning: true,
        maxWaitMs: FETCH_WAIT_MS,
        prefetch: 50,
      }),
  },
];

/** A topic of 3 partitions whose 3,000 messages, over 10 keys, are all in partition 0. */
async function hotPartitionTopic(): Promise<string> {
  const topic = unique('fetch-wait-hot');
  await createTopic(eventTopics.client, topic, 3);
  for (let i = 0; i < 3000; i += 500) {
    const messages = Array.from({ length: 500 }, (_, j) => ({
      key: `k${(i + j) % 10}`,
      value: `${i + j}`,
      partition: 0,
    }));
    await eventTopics.producer.send({ topic, messages });
  }
  return topic;
}

describe.each(clients)('a Kafka receiver on $name whose buffers fill', ({ receiver: receiverOf }) => {
  it.each([
    ['every partition pauses', () => eventTopics.topicWith(3, 3000, 30)],
    ['one partition pauses while the others are quiet', hotPartitionTopic],
  ])(
    "keeps delivering a backlog many times its prefetch without waiting out the client's fetch wait: %s",
    async (_case, topicOf) => {
      const topic = await topicOf();
      const receiver = receiverOf(unique('group'), topic);
      let handled = 0;
      const output = lastValueFrom(
        receiver.pipe(
          keyedDispatch<KafkaMessage, string, void>({
            key: kafkaKey,
            maxInFlight: 4,
            handle: async () => {
              await new Promise((resolve) => setTimeout(resolve, 2));
              handled++;
            },
          }),
        ),
        { defaultValue: undefined },
      );
      try {
        // About 2,000 a second. Half the backlog, while every partition still holds messages: a partition
        // drained dry would hold a resumed one behind its own fetch wait, which no receiver can shorten.
        expect(await within(10_000, () => handled >= 1500)).toBe(true);
      } finally {
        await receiver.close();
        await output;
      }
    },
  );

  it('goes on fetching the other partitions while a hot key holds a partition whose buffer filled', async () => {
    const topic = unique('fetch-wait-held');
    await createTopic(eventTopics.client, topic, 2);
    const hot = Array.from({ length: 200 }, (_, i) => ({ key: 'hot', value: `${i}`, partition: 0 }));
    await eventTopics.producer.send({ topic, messages: hot });
    const receiver = receiverOf(unique('group'), topic);
    const gate = deferred();
    let hotStarted = 0;
    let cold = 0;
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch<KafkaMessage, string, void>({
          key: kafkaKey,
          maxInFlight: 8,
          maxPerKey: 2,
          handle: async (m) => {
            if (m.partition === 0) {
              hotStarted++;
              await gate.promise;
            } else cold++;
          },
        }),
      ),
      { defaultValue: undefined },
    );
    try {
      // The hot key's first message runs and waits; its next ones park, and its partition is held.
      expect(await within(10_000, () => hotStarted === 1)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const coldMessages = Array.from({ length: 50 }, (_, i) => ({
        key: `c${i % 5}`,
        value: `${i}`,
        partition: 1,
      }));
      await eventTopics.producer.send({ topic, messages: coldMessages });
      expect(await within(10_000, () => cold === 50)).toBe(true);
    } finally {
      gate.resolve();
      await receiver.close();
      await output;
    }
  });
});
