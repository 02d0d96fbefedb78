import { DispatchStats } from 'keyed-dispatch';
import type { TransportLag } from 'keyed-dispatch/kafka';
import { deferred } from '../support/waits';
import { ADAPTERS } from './adapters';
import { createTopic, unique, within } from './broker';
import { decode, dispatchRecords, type Event, useEventTopics } from './events';

jest.setTimeout(60_000);

const eventTopics = useEventTopics('lag');

/** Partition 0 holds key a's events 0–9, partition 1 key b's events 0–5. */
async function topicOfTwoPartitions(): Promise<string> {
  const topic = unique('lag');
  await createTopic(eventTopics.client, topic, 2);
  const events = (key: string, count: number, partition: number) =>
    Array.from({ length: count }, (_, seq) => ({ key, value: JSON.stringify({ key, seq }), partition }));
  await eventTopics.producer.send({ topic, messages: [...events('a', 10, 0), ...events('b', 6, 1)] });
  return topic;
}

/** The lag entries by partition, in partition order. */
const byPartition = (lags: readonly TransportLag[]) =>
  [...lags].sort((x, y) => (x.partition ?? 0) - (y.partition ?? 0));

describe.each(ADAPTERS)('Kafka lag on $name with a real broker', (kind) => {
  it('reads, per partition, the records from the first unfinished offset to the high watermark, and the committed offset', async () => {
    const topic = await topicOfTwoPartitions();
    const receiver = kind.receiver(unique('group'), [topic], { commitIntervalMs: 50, closeTimeoutMs: 0 });
    const stats = new DispatchStats();
    const gate = deferred();
    // a#4 and b#1 wait: each key's later events queue behind them, unfinished.
    const held = ({ key, seq }: Event) => (key === 'a' && seq >= 4) || (key === 'b' && seq >= 1);
    const output = dispatchRecords(
      receiver,
      async (m) => {
        if (held(decode(m))) await gate.promise;
      },
      { stats },
    );
    const lagOf = () => byPartition(stats.snapshot().transportLag);
    const committedAt = (...offsets: string[]) =>
      within(
        20_000,
        () =>
          lagOf()
            .map((l) => l.committed)
            .join() === offsets.join(),
      );
    try {
      expect(await committedAt('4', '1')).toBe(true);
      expect(lagOf()).toEqual([
        {
          transport: 'kafka',
          source: topic,
          partition: 0,
          consumer: null,
          lag: 6,
          committed: '4',
          at: expect.any(Number),
        },
        {
          transport: 'kafka',
          source: topic,
          partition: 1,
          consumer: null,
          lag: 5,
          committed: '1',
          at: expect.any(Number),
        },
      ]);

      gate.resolve();
      expect(await committedAt('10', '6')).toBe(true);
      expect(lagOf().map((l) => l.lag)).toEqual([0, 0]);
    } finally {
      gate.resolve();
      await receiver.close();
      await output;
    }
  });
});
