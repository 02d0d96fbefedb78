import { type Kafka, Partitioners } from 'kafkajs';
import { keyedProducer } from '../src/kafka';

/**
 * Creates `topic` with `partitions` partitions and produces `messages` values `key:seq` over `keys`
 * keys (`k0`, `k1`, …), in order per key: the input of the Kafka benchmarks. Each key's messages come in
 * runs of `runLength` consecutive ones (1 by default: the keys take turns message by message).
 */
export async function produceKeyedTopic(
  kafka: Kafka,
  topic: string,
  {
    messages,
    keys,
    partitions,
    runLength = 1,
  }: { messages: number; keys: number; partitions: number; runLength?: number },
): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }],
    waitForLeaders: true,
  });
  await admin.disconnect();
  const producer = kafka.producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    idempotent: true,
    maxInFlightRequests: 1,
  });
  await producer.connect();
  const send = keyedProducer<[number, number]>(producer, {
    topic,
    key: ([key]) => `k${key}`,
    value: ([key, seq]) => `${key}:${seq}`,
  });
  for (let from = 0; from < messages / keys; from += runLength) {
    const run = Array.from({ length: runLength }, (_, i) => from + i);
    await send.send(
      Array.from({ length: keys }, (_, k) => run.map((seq): [number, number] => [k, seq])).flat(),
    );
  }
  await producer.disconnect();
}
