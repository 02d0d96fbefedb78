import { keyedDispatch } from 'keyed-dispatch';
import { type KafkaConsumerAdapter, type KafkaMessage, KafkaReceiver, kafkaKey } from 'keyed-dispatch/kafka';
import { lastValueFrom } from 'rxjs';
import { ADAPTERS } from './adapters';
import { createTopic, unique, within } from './broker';
import { useEventTopics } from './events';

jest.setTimeout(60_000);

const eventTopics = useEventTopics('fetch-size');

/** One partition of small records in producer batches of 100: 4,000 of them, about 460 KB. */
const RECORDS = 4000;
const PRODUCER_BATCH = 100;
const VALUE_BYTES = 100;

/**
 * The most records one fetch can bring when it asks the partition for `bytes`: what fits, and one
 * producer batch more (the broker returns a first batch whole, and a batch may straddle the limit).
 */
const mostPerFetch = (bytes: number) => Math.floor(bytes / VALUE_BYTES) + PRODUCER_BATCH;

let topic: string;
beforeAll(async () => {
  topic = unique('fetch-size');
  await createTopic(eventTopics.client, topic, 1);
  for (let i = 0; i < RECORDS; i += PRODUCER_BATCH) {
    const messages = Array.from({ length: PRODUCER_BATCH }, (_, j) => ({
      key: `k${(i + j) % 10}`,
      value: String(i + j).padStart(VALUE_BYTES, '0'),
      partition: 0,
    }));
    await eventTopics.producer.send({ topic, messages });
  }
});

/** Passes everything through, noting how many records each fetch handed to the receiver. */
function countingFetches(adapter: KafkaConsumerAdapter, fetched: number[]): KafkaConsumerAdapter {
  return {
    start: (listener) =>
      adapter.start({
        prefetch: listener.prefetch,
        batch: (t, p, records) => {
          fetched.push(records.length);
          return listener.batch(t, p, records);
        },
        revoking: (partitions) => listener.revoking(partitions),
        assigned: (partitions, mode) => listener.assigned(partitions, mode),
        failed: (error) => listener.failed(error),
        transportFailed: (operation, error) => listener.transportFailed(operation, error),
        transportRecovered: () => listener.transportRecovered(),
      }),
    pause: (partitions) => adapter.pause(partitions),
    resume: (partitions) => adapter.resume(partitions),
    commit: (offsets) => adapter.commit(offsets),
    committed: (partitions) => adapter.committed(partitions),
    close: () => adapter.close(),
  };
}

/** Reads the whole topic with this `prefetch`; returns the records each fetch brought. */
async function recordsPerFetch(kind: (typeof ADAPTERS)[number], prefetch: number): Promise<number[]> {
  const fetched: number[] = [];
  const receiver = new KafkaReceiver(countingFetches(kind.adapter(unique('group'), [topic]), fetched), {
    prefetch,
  });
  let handled = 0;
  const output = lastValueFrom(
    receiver.pipe(
      keyedDispatch<KafkaMessage, string, void>({
        key: kafkaKey,
        maxInFlight: 100,
        handle: async () => {
          handled++;
        },
      }),
    ),
    { defaultValue: undefined },
  );
  try {
    expect(await within(20_000, () => handled >= RECORDS)).toBe(true);
  } finally {
    await receiver.close();
    await output;
  }
  return fetched;
}

// kafkajs takes its fetch size from the consumer the user creates (`maxBytesPerPartition`), which the
// adapter cannot change: the Kafka guide gives the setting.
describe.each(ADAPTERS.filter((a) => a.name.startsWith('@platformatic/kafka')))(
  'a Kafka receiver on $name whose consumer sets no fetch size',
  (kind) => {
    it('fetches about `prefetch` records of a partition at a time, not a client-sized megabyte', async () => {
      // prefetch 50 asks 16 KiB of a partition (the least); the client's own 1 MiB took the whole topic.
      const fetched = await recordsPerFetch(kind, 50);
      expect(Math.max(...fetched)).toBeLessThanOrEqual(mostPerFetch(16_384));
    });

    it('fetches more records at a time for a larger `prefetch`', async () => {
      // prefetch 4,000 asks 32 bytes a record, 128,000 bytes.
      const fetched = await recordsPerFetch(kind, 4000);
      expect(Math.max(...fetched)).toBeGreaterThan(mostPerFetch(16_384));
      expect(Math.max(...fetched)).toBeLessThanOrEqual(mostPerFetch(128_000));
    });
  },
);
