import { keyedDispatch } from 'keyed-dispatch';
import { type KafkaMessage, kafkaKey } from 'keyed-dispatch/kafka';
import { lastValueFrom } from 'rxjs';
import { deferred } from '../support/waits';
import { ADAPTERS } from './adapters';
import { createTopic, unique, within } from './broker';
import { useEventTopics } from './events';

jest.setTimeout(60_000);

const eventTopics = useEventTopics('fetch-wait');

/**
 * The clients' fetch wait. A backlog many times `prefetch`, and a handler slower than fetching, so every
 * partition's buffer fills and every partition pauses, again and again: a client that waits out its
 * fetch wait once (kafkajs sleeps for it when every partition is paused, whatever resumes meanwhile; a
 * long poll of quiet partitions keeps a resumed one waiting as long) takes longer than the spec waits
 * for the first half of the backlog, so the receiver must get fetching going again without it. Short
 * enough that closing, which may still wait it out (a stopped receiver pauses everything), stays quick.
 */
const FETCH_WAIT_MS = 4_000;
/** A few dozen records a fetch, so the backlog takes many fetches. */
const FETCH_BYTES = 4096;

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

describe.each(ADAPTERS)('a Kafka receiver on $name whose buffers fill', (adapter) => {
  const backlogReceiver = (groupId: string, topic: string) =>
    adapter.receiver(
      groupId,
      [topic],
      { prefetch: 50 },
      { maxWaitMs: FETCH_WAIT_MS, maxBytesPerPartition: FETCH_BYTES },
    );

  it.each([
    ['every partition pauses', () => eventTopics.topicWith(3, 3000, 30)],
    ['one partition pauses while the others are quiet', hotPartitionTopic],
  ])(
    "keeps delivering a backlog many times its prefetch without waiting out the client's fetch wait: %s",
    async (_case, topicOf) => {
      const topic = await topicOf();
      const receiver = backlogReceiver(unique('group'), topic);
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
        expect(await within(30_000, () => handled > 0)).toBe(true);
        // About 2,000 a second: under a second, where a single wait-out of the fetch wait takes longer.
        // Half the backlog, while every partition still holds messages: a partition drained dry would
        // hold a resumed one behind its own fetch wait, which no receiver can shorten.
        expect(await within(FETCH_WAIT_MS, () => handled >= 1500)).toBe(true);
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
    // A held fetch never lets the cold messages through, whatever the fetch wait: a short one closes quickly.
    const receiver = adapter.receiver(
      unique('group'),
      [topic],
      { prefetch: 50 },
      { maxWaitMs: 500, maxBytesPerPartition: FETCH_BYTES },
    );
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
