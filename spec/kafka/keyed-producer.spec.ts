import { keyedDispatch } from 'keyed-dispatch';
import { type KafkaMessage, kafkaKey, keyedProducer } from 'keyed-dispatch/kafka';
import { lastValueFrom } from 'rxjs';
import { ADAPTERS } from './adapters';
import { createTopic, unique, within } from './broker';
import { useEventTopics } from './events';
import { useProducers } from './producers';

jest.setTimeout(60_000);

const eventTopics = useEventTopics('keyed-producer');
const producers = useProducers(eventTopics);
const text = new TextEncoder();

/** A message whose record value is given as it is: a typed array, a Buffer or a string. */
interface Payload {
  id: string;
  body: Uint8Array | string;
}

describe.each(producers)('keyedProducer on $name', (client) => {
  /** One topic per producer, written once, read back by each consumer set-up. */
  let topic: Promise<string> | undefined;
  const written = () => {
    topic ??= (async () => {
      const name = unique('bytes');
      await createTopic(eventTopics.client, name, 1);
      const send = keyedProducer<Payload>(client.producer(), {
        topic: name,
        key: (m) => m.id,
        value: (m) => m.body,
        headers: (m) => ({
          // A view into a larger buffer: only its own bytes go.
          trace: text.encode(`[trace-${m.id}]`).subarray(1, -1),
          hops: [new Uint8Array([1, 2]), Buffer.from('b'), 'c'],
        }),
      });
      await send.send([
        { id: 'typed', body: text.encode('[typed array]').subarray(1, -1) },
        { id: 'buffer', body: Buffer.from('buffer') },
        { id: 'string', body: 'string' },
      ]);
      await send.send({ id: 'empty', body: '' });
      return name;
    })();
    return topic;
  };

  it.each(ADAPTERS)(
    'sends a typed array as its bytes, as value and as headers, as it sends Buffers, strings and empty text, keyed and in order, read back on $name',
    async (kind) => {
      const receiver = kind.receiver(unique('group'), [await written()]);
      const read: KafkaMessage[] = [];
      const output = lastValueFrom(
        receiver.pipe(keyedDispatch({ key: kafkaKey, handle: (m) => [read.push(m)] })),
      );
      await within(20_000, () => read.length === 4);
      await receiver.close();
      await output;

      expect(read.map((m) => [kafkaKey(m), m.value?.toString('utf8')])).toEqual([
        ['typed', 'typed array'],
        ['buffer', 'buffer'],
        ['string', 'string'],
        ['empty', ''],
      ]);
      for (const m of read) {
        const hops = m.headers.hops as Uint8Array[];
        expect([m.headers.trace, ...hops].map((bytes) => Array.from(bytes as Uint8Array))).toEqual([
          Array.from(text.encode(`trace-${kafkaKey(m)}`)),
          [1, 2],
          Array.from(text.encode('b')),
          Array.from(text.encode('c')),
        ]);
      }
    },
  );
});
