// One member of the scale-out spec's consumer group, run as its own process (bundled by the spec).
// argv: client groupId topic recordFile handlerMs maxInFlight [instanceId [sessionTimeoutMs]], where client
// is 'kafkajs', 'platformatic' (consumer protocol), 'platformatic-classic' (classic protocol, with a 30 s
// session timeout) or 'confluent' (@confluentinc/kafka-javascript, consumer protocol); with an instanceId a platformatic member joins as a static member; sessionTimeoutMs
// replaces the kafkajs member's 6 s.
// Appends one line per handled message, written before the handler completes (so before its offset can be
// committed): "key seq partition offset startMs doneMs". Tells the spec how many partitions it holds.
import { closeSync, openSync, writeSync } from 'node:fs';
import { Consumer } from '@platformatic/kafka';
import { Kafka, logLevel } from 'kafkajs';
import { keyedDispatch } from 'keyed-dispatch';
import {
  confluentAdapter,
  type KafkaConsumerAdapter,
  type KafkaConsumerListener,
  type KafkaMessage,
  KafkaReceiver,
  kafkajsAdapter,
  kafkaKey,
  platformaticAdapter,
} from 'keyed-dispatch/kafka';

const [client, groupId, topic, recordFile, handlerMs, maxInFlight, instanceId, sessionTimeoutMs] =
  process.argv.slice(2);
const now = () => performance.timeOrigin + performance.now();
const send = (message: unknown) => process.send?.(message);

function clientAdapter(): KafkaConsumerAdapter {
  if (client === 'confluent') {
    const config = {
      'client.id': `member-${process.pid}`,
      'bootstrap.servers': '127.0.0.1:9092',
      'group.id': groupId,
      'group.protocol': 'consumer',
      'fetch.wait.max.ms': 100,
    };
    return confluentAdapter({
      client: require('@confluentinc/kafka-javascript'),
      config,
      topics: [topic],
      fromBeginning: true,
    });
  }
  if (client === 'platformatic' || client === 'platformatic-classic') {
    const protocol =
      client === 'platformatic'
        ? { groupProtocol: 'consumer' as const, rebalanceTimeout: 60_000 }
        : { sessionTimeout: 30_000, heartbeatInterval: 500, rebalanceTimeout: 30_000 };
    const consumer = new Consumer({
      clientId: `member-${process.pid}`,
      bootstrapBrokers: ['127.0.0.1:9092'],
      groupId,
      groupInstanceId: instanceId || undefined,
      ...protocol,
    });
    return platformaticAdapter(consumer, { topics: [topic], fromBeginning: true, maxWaitMs: 100 });
  }
  const consumer = new Kafka({
    clientId: `member-${process.pid}`,
    brokers: ['127.0.0.1:9092'],
    logLevel: logLevel.NOTHING,
  }).consumer({
    groupId,
    maxWaitTimeInMs: 100,
    sessionTimeout: Number(sessionTimeoutMs || 6000),
    heartbeatInterval: 500,
    rebalanceTimeout: 10000,
  });
  return kafkajsAdapter(consumer, { topics: [topic], fromBeginning: true });
}

/** Reports how many partitions the member holds whenever that changes. */
function counting(adapter: KafkaConsumerAdapter): KafkaConsumerAdapter {
  const held = new Set<number>();
  const report = () => send({ held: held.size });
  return {
    start: (listener: KafkaConsumerListener) =>
      adapter.start({
        prefetch: listener.prefetch,
        batch: (topic, partition, records) => listener.batch(topic, partition, records),
        assigned(partitions, mode) {
          if (mode !== 'added') held.clear();
          for (const { partition } of partitions) held.add(partition);
          report();
          listener.assigned(partitions, mode);
        },
        async revoking(partitions) {
          // An eager revoke takes everything at once; named partitions stay held until they are let go.
          if (partitions === undefined) held.clear();
          await listener.revoking(partitions);
          for (const { partition } of partitions ?? []) held.delete(partition);
          report();
        },
        failed: (error) => listener.failed(error),
        transportFailed: (operation, error) => listener.transportFailed(operation, error),
        transportRecovered: () => listener.transportRecovered(),
      }),
    pause: (partitions) => adapter.pause(partitions),
    resume: (partitions) => adapter.resume(partitions),
    commit: (offsets) => adapter.commit(offsets),
    committed: (partitions) => adapter.committed(partitions),
    close: () => adapter.close(),
  };
}

// Loaded: timing from here leaves out the start-up of the process itself.
send({ startingAt: now() });
const receiver = new KafkaReceiver(counting(clientAdapter()), { commitIntervalMs: 100 });
const fd = openSync(recordFile, 'a');
let handled = 0;
receiver
  .pipe(
    keyedDispatch<KafkaMessage, string, void>({
      key: kafkaKey,
      maxInFlight: Number(maxInFlight),
      handle: async (m) => {
        const started = now();
        await new Promise((resolve) => setTimeout(resolve, Number(handlerMs)));
        const { key, seq } = JSON.parse(m.value!.toString());
        writeSync(fd, `${key} ${seq} ${m.partition} ${m.offset} ${started} ${now()}\n`);
        handled++;
      },
    }),
  )
  .subscribe({
    error: (err) => {
      console.error(err);
      process.exit(1);
    },
  });
const progress = setInterval(() => send({ handled }), 100);
process.on('message', async (message) => {
  if (message !== 'close') return;
  clearInterval(progress);
  await receiver.close();
  closeSync(fd);
  process.exit(0);
});
