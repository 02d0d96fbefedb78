import { Consumer } from '@platformatic/kafka';
import { keyedDispatch } from 'keyed-dispatch';
import { fromPlatformaticKafka, type KafkaMessage, kafkaKey } from 'keyed-dispatch/kafka';
import { lastValueFrom } from 'rxjs';
import { BROKER, offsets, QUICK_GROUP, unique } from './broker';
import { useEventTopics } from './events';

jest.setTimeout(90_000);

const eventTopics = useEventTopics('static');

/**
 * A @platformatic/kafka consumer of `groupId` with a group instance id (static membership). Its option
 * types (1.22) do not list `groupInstanceId`; the adapter reads it from the options all the same.
 */
function staticConsumer(groupId: string, instanceId: string, protocol: 'consumer' | 'classic'): Consumer {
  const timing =
    protocol === 'consumer'
      ? { groupProtocol: 'consumer' as const, rebalanceTimeout: 60_000 }
      : {
          sessionTimeout: QUICK_GROUP.sessionTimeout,
          heartbeatInterval: QUICK_GROUP.heartbeatInterval,
          rebalanceTimeout: QUICK_GROUP.rebalanceTimeout,
        };
  const options = { clientId: 'static-spec', bootstrapBrokers: [BROKER], groupId, ...timing };
  return new Consumer(Object.assign(options, { groupInstanceId: instanceId }));
}

describe.each(['consumer', 'classic'] as const)(
  '@platformatic/kafka with a group instance id, %s protocol',
  (protocol) => {
    it('commits what it handled: the broker accepts its commits', async () => {
      const topic = await eventTopics.topicWith(2, 100, 10);
      const groupId = unique('group');
      const receiver = fromPlatformaticKafka({
        consumer: staticConsumer(groupId, unique('instance'), protocol),
        topics: [topic],
        fromBeginning: true,
        maxWaitMs: 100,
        commitIntervalMs: 100,
      });
      let handled = 0;
      const output = lastValueFrom(
        receiver.pipe(
          keyedDispatch<KafkaMessage, string, void>({
            key: kafkaKey,
            handle: async () => {
              handled++;
            },
          }),
        ),
        { defaultValue: undefined },
      );
      const { end } = await offsets(eventTopics.client, groupId, topic);
      // Committed while it runs (every 100 ms), not only by close().
      let committed = new Map<number, string>();
      for (const until = Date.now() + 20_000; Date.now() < until; ) {
        committed = (await offsets(eventTopics.client, groupId, topic)).committed;
        if (handled === 100 && [...end].every(([p, o]) => committed.get(p) === o)) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(committed).toEqual(end);
      await receiver.close();
      await output;
    });
  },
);
