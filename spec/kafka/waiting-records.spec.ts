import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { keyedDispatch } from 'keyed-dispatch';
import {
  type KafkaConsumerAdapter,
  type KafkaConsumerListener,
  type KafkaMessage,
  KafkaReceiver,
  type KafkaRecord,
  kafkaKey,
} from 'keyed-dispatch/kafka';
import { lastValueFrom } from 'rxjs';

// Records that wait long in a partition's buffer outlive the young generation's collections and are
// promoted: each object a waiting record keeps beside the client's own is old garbage to be collected
// by a full collection only, and the heap grows by it (the kafka-memory bench). Measured here on the
// receiver alone, fed by an adapter that hands over one batch, so the heap holds nothing else that grows.

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const RECORDS = 50_000;

/** The heap in use once the garbage is collected. */
function liveHeap(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** Records shaped as a client hands them over: key and value bytes, offset and timestamp text, headers. */
function clientRecords(count: number): KafkaRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    offset: String(i),
    key: Buffer.from(`k${i % 100}`),
    value: Buffer.from(`v${i}`),
    headers: {},
    timestamp: String(1_700_000_000_000 + i),
  }));
}

/** An adapter whose start hands the listener over; it fetches nothing itself. */
function handingOver(listening: (listener: KafkaConsumerListener) => void): KafkaConsumerAdapter {
  return {
    start: async (listener) => listening(listener),
    pause: () => undefined,
    resume: () => undefined,
    commit: async () => undefined,
    committed: async (partitions) =>
      partitions.map(({ topic, partition }) => ({ topic, partition, offset: null, metadata: null })),
    close: async () => undefined,
  };
}

describe('a Kafka receiver holding fetched records that wait for delivery', () => {
  it('keeps each waiting record without an object of its own: under 64 bytes a record beside the client’s', async () => {
    let listener: KafkaConsumerListener | undefined;
    const receiver = new KafkaReceiver(
      handingOver((l) => {
        listener = l;
      }),
      { prefetch: 2 * RECORDS },
    );
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let delivered = 0;
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch<KafkaMessage, string, void>({
          key: kafkaKey,
          // One message is delivered and held; every other stays in the partition's buffer.
          maxInFlight: 1,
          handle: async () => {
            delivered++;
            await held;
          },
        }),
      ),
      { defaultValue: undefined },
    );
    try {
      await new Promise((resolve) => setTimeout(resolve, 10));
      const records = clientRecords(RECORDS);
      const before = liveHeap();
      listener?.batch('orders', 0, records);
      await new Promise((resolve) => setTimeout(resolve, 10));
      const perRecord = (liveHeap() - before) / RECORDS;
      expect(delivered).toBe(1);
      // About 40: the buffer's two ring slots and the tracker's offset and state entries, 8 bytes each
      // and the arrays' slack. A message object made for each record on arrival took 124.
      expect(perRecord).toBeLessThan(64);
      expect(records.length).toBe(RECORDS);
    } finally {
      release();
      await receiver.close();
      await output;
    }
  });
});
