import { keyedDispatch } from 'keyed-dispatch';
import { type KafkaMessage, kafkaKey } from 'keyed-dispatch/kafka';
import { lastValueFrom } from 'rxjs';
import { ADAPTERS } from './adapters';
import { createTopic, unique, within } from './broker';
import { useEventTopics } from './events';

jest.setTimeout(60_000);

const eventTopics = useEventTopics('partition-share');

const WINDOW = 32;
const MESSAGES_PER_PARTITION = 200;

/**
 * Two partitions of 200 messages each: partition 0's over 2 keys, partition 1's over 30. Partition 0's
 * messages mostly wait behind their two keys; partition 1's can nearly all run at once.
 */
async function unevenTopic(): Promise<string> {
  const topic = unique('partition-share');
  await createTopic(eventTopics.client, topic, 2);
  const messages = Array.from({ length: MESSAGES_PER_PARTITION }, (_, i) => [
    { key: `few-${i % 2}`, value: `${i}`, partition: 0 },
    { key: `many-${i % 30}`, value: `${i}`, partition: 1 },
  ]).flat();
  await eventTopics.producer.send({ topic, messages });
  return topic;
}

describe.each(ADAPTERS)('a Kafka receiver on $name', ({ receiver: receiverOf }) => {
  it('gives each partition an equal share of the window, so messages waiting behind the few keys of one partition do not hold the places of the others', async () => {
    const topic = await unevenTopic();
    const receiver = receiverOf(unique('group'), [topic]);
    let running = 0;
    let starts = 0;
    /** Handlers running (of both partitions) as each of partition 1's starts, once the window has filled. */
    const seenByMany: number[] = [];
    let manyHandled = 0;
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch<KafkaMessage, string, void>({
          key: kafkaKey,
          maxInFlight: WINDOW,
          // No key parks (as with many keys, each far below its share): only the order of delivery decides.
          maxPerKey: WINDOW,
          handle: async (m) => {
            running++;
            if (++starts > 2 * WINDOW && m.partition === 1) seenByMany.push(running);
            await new Promise((resolve) => setTimeout(resolve, 10));
            running--;
            if (m.partition === 1) manyHandled++;
          },
        }),
      ),
      { defaultValue: undefined },
    );
    try {
      expect(await within(30_000, () => manyHandled === MESSAGES_PER_PARTITION)).toBe(true);
      // Partition 1's messages that started after the window filled: most of its 200.
      expect(seenByMany.length).toBeGreaterThan(MESSAGES_PER_PARTITION / 2);
      // In equal turns, each partition would get as many deliveries: partition 0's waiting messages
      // would fill the window, and about 2 of partition 1's would run beside its 2.
      const mean = seenByMany.reduce((sum, n) => sum + n, 0) / seenByMany.length;
      expect(mean).toBeGreaterThanOrEqual(WINDOW / 2 - 4);
    } finally {
      await receiver.close();
      await output;
    }
  });
});
