import type { ConsumerConfig } from 'kafkajs';
import { keyedDispatch } from 'keyed-dispatch';
import {
  fromKafka,
  type KafkaJsClient,
  type KafkaMessage,
  KafkaReceiver,
  kafkaKey,
} from 'keyed-dispatch/kafka';
import { lastValueFrom } from 'rxjs';
import { ADAPTERS } from './adapters';
import { createTopic, kafka, QUICK_GROUP, unique, within } from './broker';
import { useEventTopics } from './events';
import { ObservedAdapter } from './observed-adapter';

jest.setTimeout(60_000);

const eventTopics = useEventTopics('fetch-size');

/** One partition of small records in producer batches of 20: 4,000 of them, about 460 KB. */
const RECORDS = 4000;
const PRODUCER_BATCH = 20;
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

/**
 * The kafkajs client, whose consumers note how many records each fetch brought (a partition's batch)
 * and pass everything through.
 */
function countingClient(fetched: number[]): KafkaJsClient {
  const client = kafka('fetch-size-spec');
  return {
    consumer: (config) => {
      const consumer = client.consumer(config as ConsumerConfig);
      return {
        ...consumer,
        run: (run) =>
          consumer.run({
            ...run,
            eachBatch: (payload) => {
              fetched.push(payload.batch.messages.length);
              return run.eachBatch?.(payload) ?? Promise.resolve();
            },
          }),
      };
    },
    admin: () => client.admin(),
  };
}

/** Reads the whole topic with this `prefetch` through an adapter of `kind`; returns the records each fetch brought. */
function recordsPerFetch(kind: (typeof ADAPTERS)[number], prefetch: number): Promise<number[]> {
  const adapter = new ObservedAdapter(kind.adapter(unique('group'), [topic]));
  return readAll(new KafkaReceiver(adapter, { prefetch }), adapter.batchSizes);
}

/** Reads the whole topic through `receiver`; returns `fetched` once it is read. */
async function readAll(receiver: KafkaReceiver, fetched: number[]): Promise<number[]> {
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

describe.each(ADAPTERS.filter((a) => a.name.startsWith('@platformatic/kafka')))(
  'a Kafka receiver on $name whose consumer sets no fetch size',
  (kind) => {
    it('fetches about `prefetch` records of a partition at a time, not a client-sized megabyte', async () => {
      // prefetch 50 asks 4 KiB of a partition (the least); the client's own 1 MiB took the whole topic.
      const fetched = await recordsPerFetch(kind, 50);
      expect(Math.max(...fetched)).toBeLessThanOrEqual(mostPerFetch(4096));
    });

    it('fetches more records at a time for a larger `prefetch`', async () => {
      // prefetch 4,000 asks 32 bytes a record, 128,000 bytes.
      const fetched = await recordsPerFetch(kind, 4000);
      expect(Math.max(...fetched)).toBeGreaterThan(mostPerFetch(16_384));
      expect(Math.max(...fetched)).toBeLessThanOrEqual(mostPerFetch(128_000));
    });
  },
);

describe('a Kafka receiver on kafkajs given the client and a group that sets no fetch size', () => {
  /** Reads the whole topic through `fromKafka({ kafka, group })`; returns the records each fetch brought. */
  const recordsPerFetch = (prefetch: number | undefined, group: { maxBytesPerPartition?: number } = {}) => {
    const fetched: number[] = [];
    const receiver = fromKafka({
      kafka: countingClient(fetched),
      group: { groupId: unique('group'), ...QUICK_GROUP, ...group },
      topics: [topic],
      fromBeginning: true,
      prefetch,
    });
    return readAll(receiver, fetched);
  };

  it("fetches about `prefetch` records of a partition at a time, not kafkajs' megabyte", async () => {
    const fetched = await recordsPerFetch(50);
    expect(Math.max(...fetched)).toBeLessThanOrEqual(mostPerFetch(4096));
  });

  it('fetches about its default `prefetch` of 150 records a partition at a time, when none is set', async () => {
    // 150 × 32 bytes: what a fetch brings stays live until handled, and the heap peaks at a multiple of it.
    const fetched = await recordsPerFetch(undefined);
    expect(Math.max(...fetched)).toBeLessThanOrEqual(mostPerFetch(150 * 32));
  });

  it("fetches what the group's own `maxBytesPerPartition` asks when it sets one", async () => {
    const fetched = await recordsPerFetch(50, { maxBytesPerPartition: 1_048_576 });
    expect(Math.max(...fetched)).toBeGreaterThan(mostPerFetch(16_384));
  });
});
