import { type Kafka, Partitioners, type Producer } from 'kafkajs';
import { type KeyedDispatchOptions, keyedDispatch } from 'keyed-dispatch';
import { type KafkaMessage, kafkaKey, keyedProducer } from 'keyed-dispatch/kafka';
import { lastValueFrom, type Observable } from 'rxjs';
import { BROKER_START_MS, createTopic, ensureBroker, kafka, unique } from './broker';

/** What the Kafka specs send: per-key numbered events. */
export interface Event {
  key: string;
  seq: number;
}

export const decode = (m: KafkaMessage): Event => JSON.parse(m.value!.toString());

/** `receiver`'s records dispatched by record key to `handle`, with `options` (`stats`, limits): the output's end. */
export function dispatchRecords(
  receiver: Observable<KafkaMessage>,
  handle: (m: KafkaMessage) => Promise<void>,
  options: Pick<KeyedDispatchOptions<KafkaMessage, string, void>, 'stats' | 'maxInFlight' | 'maxPerKey'> = {},
): Promise<void> {
  return lastValueFrom(
    receiver.pipe(keyedDispatch<KafkaMessage, string, void>({ key: kafkaKey, handle, ...options })),
    {
      defaultValue: undefined,
    },
  );
}

/**
 * A spec file's admin client and producer on the local broker (connected before its tests, closed
 * after them), and fresh topics filled with events.
 */
export function useEventTopics(clientId: string): {
  readonly client: Kafka;
  readonly producer: Producer;
  /** A new topic holding `count` events over `keys` keys (k0, k1, … in turn), numbered per key. */
  topicWith(partitions: number, count: number, keys: number): Promise<string>;
} {
  let client: Kafka;
  let producer: Producer;
  beforeAll(async () => {
    await ensureBroker();
    client = kafka(clientId);
    producer = client.producer({
      createPartitioner: Partitioners.DefaultPartitioner,
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();
  }, BROKER_START_MS);
  afterAll(async () => {
    await producer?.disconnect();
  });
  return {
    get client() {
      return client;
    },
    get producer() {
      return producer;
    },
    async topicWith(partitions, count, keys) {
      const topic = unique(clientId);
      await createTopic(client, topic, partitions);
      const send = keyedProducer<Event>(producer, { topic, key: (e) => e.key });
      const events: Event[] = [];
      for (let n = 0; n < count; n++) events.push({ key: `k${n % keys}`, seq: Math.floor(n / keys) });
      for (let i = 0; i < events.length; i += 500) await send.send(events.slice(i, i + 500));
      return topic;
    },
  };
}
