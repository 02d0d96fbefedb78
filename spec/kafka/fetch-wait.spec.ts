import { KafkaReceiver } from 'keyed-dispatch/kafka';
import { deferred } from '../support/waits';
import { ADAPTERS } from './adapters';
import { createTopic, unique, within } from './broker';
import { dispatchRecords, useEventTopics } from './events';
import { ObservedAdapter } from './observed-adapter';

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
/** How often the spec's ticker looks for a stall of the whole process. */
const TICK_MS = 20;
/** A few dozen records a fetch, so the backlog takes many fetches. */
const FETCH_BYTES = 4096;

/** How much later than the broker answers the spec's reading back of commit metadata answers. */
const COMMITTED_DELAY_MS = 500;
/** Messages a send carries: small record batches, so no fetch brings much more than `FETCH_BYTES`. */
const SEND = 30;

/**
 * A topic of 3 partitions with 3,000 messages over `keys` keys, the `n`th in partition `partitionOf(n)`
 * and of key `k${n % keys}`.
 */
async function backlogTopic(keys: number, partitionOf: (n: number) => number): Promise<string> {
  const topic = unique('fetch-wait');
  await createTopic(eventTopics.client, topic, 3);
  for (let i = 0; i < 3000; i += SEND) {
    const messages = Array.from({ length: SEND }, (_, j) => ({
      key: `k${(i + j) % keys}`,
      value: `${i + j}`,
      partition: partitionOf(i + j),
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
    ['every partition pauses', () => backlogTopic(30, (n) => n % 3)],
    ['one partition pauses while the others are quiet', () => backlogTopic(10, () => 0)],
  ])(
    "keeps delivering a backlog many times its prefetch without waiting out the client's fetch wait: %s",
    async (_case, topicOf) => {
      const topic = await topicOf();
      const receiver = backlogReceiver(unique('group'), topic);
      let handled = 0;
      // The longest time between two handlings of the first half of the backlog, while every partition
      // still holds messages (a partition drained dry would hold a resumed one behind its own fetch
      // wait, which no receiver can shorten), less the longest stall of the whole process within it. A
      // wait-out of the fetch wait leaves the process idle, so it shows as a gap that long; a collector
      // pause or a starved CPU stalls the ticker below as long, and does not count.
      let lastAt = 0;
      let longestGap = 0;
      let tickAt = performance.now();
      let stallSinceLast = 0;
      const ticker = setInterval(() => {
        const now = performance.now();
        stallSinceLast = Math.max(stallSinceLast, now - tickAt);
        tickAt = now;
      }, TICK_MS);
      const output = dispatchRecords(
        receiver,
        async () => {
          await new Promise((resolve) => setTimeout(resolve, 2));
          const now = performance.now();
          const stall = Math.max(stallSinceLast, now - tickAt);
          if (handled > 0 && handled < 1500) longestGap = Math.max(longestGap, now - lastAt - stall);
          lastAt = now;
          stallSinceLast = 0;
          handled++;
        },
        { maxInFlight: 4 },
      );
      try {
        expect(await within(30_000, () => handled > 0)).toBe(true);
        expect(await within(30_000, () => handled >= 1500)).toBe(true);
        expect(longestGap).toBeLessThan(FETCH_WAIT_MS / 2);
      } finally {
        clearInterval(ticker);
        await receiver.close();
        await output;
      }
    },
  );

  it("takes in about its prefetch of a partition, not its whole backlog, while the partition's commit metadata is read back", async () => {
    const topic = await backlogTopic(10, () => 0);
    const observed = new ObservedAdapter(
      adapter.adapter(unique('group'), [topic], {
        maxWaitMs: FETCH_WAIT_MS,
        maxBytesPerPartition: FETCH_BYTES,
      }),
      COMMITTED_DELAY_MS,
    );
    const receiver = new KafkaReceiver(observed, { prefetch: 50 });
    const gate = deferred();
    let started = 0;
    const output = dispatchRecords(
      receiver,
      async () => {
        started++;
        await gate.promise;
      },
      { maxInFlight: 4 },
    );
    try {
      // Every handler waits: what the receiver took in by the time the window is full, and a while later,
      // is its prefetch and the fetches under way, not the 3,000 messages the partition holds.
      expect(await within(30_000, () => started === 4)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, COMMITTED_DELAY_MS));
      const takenIn = observed.batchSizes.reduce((sum, size) => sum + size, 0);
      expect(takenIn).toBeLessThan(1000);
    } finally {
      gate.resolve();
      await receiver.close();
      await output;
    }
  });

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
    const output = dispatchRecords(
      receiver,
      async (m) => {
        if (m.partition === 0) {
          hotStarted++;
          await gate.promise;
        } else cold++;
      },
      { maxInFlight: 8, maxPerKey: 2 },
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
