import { keyedDispatch } from 'keyed-dispatch';
import { type KafkaMessage, kafkaKey, keyedProducer } from 'keyed-dispatch/kafka';
import { lastValueFrom } from 'rxjs';
import { ADAPTERS } from './adapters';
import { createTopic, unique, within } from './broker';
import { useEventTopics } from './events';

jest.setTimeout(60_000);

const eventTopics = useEventTopics('keyed-producer');
const text = new TextEncoder();

/** A message whose record value is given as it is: a typed array, a Buffer or a string. */
interface Payload {
  id: string;
  body: Uint8Array | string;
}

describe.each(ADAPTERS)('keyedProducer on kafkajs, read back on $name', (kind) => {
  it('sends a typed array as its bytes, as value and as headers, as it sends Buffers and strings', async () => {
    const topic = unique('bytes');
    await createTopic(eventTopics.client, topic, 1);
    const send = keyedProducer<Payload>(eventTopics.producer, {
      topic,
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

    const receiver = kind.receiver(unique('group'), [topic]);
    const read: KafkaMessage[] = [];
    const output = lastValueFrom(
      receiver.pipe(keyedDispatch({ key: kafkaKey, handle: (m) => [read.push(m)] })),
    );
    await within(20_000, () => read.length === 3);
    await receiver.close();
    await output;

    expect(read.map((m) => [kafkaKey(m), m.value?.toString('utf8')])).toEqual([
      ['typed', 'typed array'],
      ['buffer', 'buffer'],
      ['string', 'string'],
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
  });
});
