import { Producer } from '@platformatic/kafka';
import type { KafkaProducer } from 'keyed-dispatch/kafka';
import { BROKER } from './broker';
import type { useEventTopics } from './events';

/** A producer client the helpers send with. */
export interface ProducerClient {
  name: string;
  /** The spec file's producer of this client, connected for its tests. */
  producer(): KafkaProducer;
}

/**
 * Both producer clients: the spec file's kafkajs producer (from `useEventTopics`) and a @platformatic/kafka
 * one made here, idempotent as well, closed after the file's tests.
 */
export function useProducers(eventTopics: ReturnType<typeof useEventTopics>): ProducerClient[] {
  let platformatic: Producer | undefined;
  afterAll(async () => {
    await platformatic?.close();
  });
  return [
    { name: 'kafkajs', producer: () => eventTopics.producer },
    {
      name: '@platformatic/kafka',
      producer: () => {
        platformatic ??= new Producer({
          clientId: 'producer-spec',
          bootstrapBrokers: [BROKER],
          idempotent: true,
        });
        return platformatic;
      },
    },
  ];
}
