import { join } from 'node:path';
import { keyedDispatch, ThreadExecutor, threadHandler } from 'keyed-dispatch';
import { type KafkaMessage, kafkaKey, type Settlement } from 'keyed-dispatch/kafka';
import { lastValueFrom, take, toArray } from 'rxjs';
import { ADAPTERS } from './adapters';
import type { Event } from './events';
import { useEventTopics } from './events';

jest.setTimeout(60_000);

const eventTopics = useEventTopics('thread-records');
const RECORDS = 300;
const KEYS = 6;

interface Described {
  fields: string[];
  event: Event;
}
const describeRecord = threadHandler<KafkaMessage, Described>(
  join(__dirname, 'thread-record-handler.js'),
  'describe',
);

describe.each(ADAPTERS)('a Kafka receiver on $name feeding thread lanes', (kind) => {
  it('hands each record to its thread as the record alone, however full its partition’s buffer', async () => {
    const topic = await eventTopics.topicWith(1, RECORDS, KEYS);
    const executor = new ThreadExecutor({ workers: 2 });
    const settled: Settlement[] = [];
    // A small buffer that the fetches fill: every record posted to a thread has buffered ones behind it.
    const receiver = kind.receiver(`${topic}-group`, [topic], {
      prefetch: 20,
      onSettled: (_, outcome) => settled.push(outcome),
    });
    try {
      const described = await lastValueFrom(
        receiver.pipe(
          keyedDispatch({ key: kafkaKey, handle: describeRecord, executor, failurePolicy: 'error' }),
          take(RECORDS),
          toArray(),
        ),
      );
      const fields = new Set(described.map((d) => d.fields.join(',')));
      expect([...fields]).toEqual(['headers,key,offset,partition,timestamp,topic,value']);
      const seqs = new Map<string, number[]>();
      for (const { event } of described) seqs.set(event.key, [...(seqs.get(event.key) ?? []), event.seq]);
      for (const [key, list] of seqs) expect({ key, list }).toEqual({ key, list: list.map((_, i) => i) });
      expect(settled.filter((outcome) => outcome !== 'done')).toEqual([]);
    } finally {
      await receiver.close();
      await executor.close();
    }
  });
});
