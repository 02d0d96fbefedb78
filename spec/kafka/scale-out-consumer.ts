// One member of the scale-out spec's consumer group, run as its own process (bundled by the spec).
// argv: groupId topic recordFile handlerMs maxInFlight. Appends one line per handled message, written before the handler
// completes (so before its offset can be committed): "key seq partition offset startMs doneMs".
import { closeSync, openSync, writeSync } from 'node:fs';
import { Kafka, logLevel } from 'kafkajs';
import { keyedDispatch } from 'keyed-dispatch';
import { fromKafka, type KafkaMessage, kafkaKey } from 'keyed-dispatch/kafka';

const [groupId, topic, recordFile, handlerMs, maxInFlight] = process.argv.slice(2);
const now = () => performance.timeOrigin + performance.now();
const send = (message: unknown) => process.send?.(message);

const consumer = new Kafka({
  clientId: `member-${process.pid}`,
  brokers: ['127.0.0.1:9092'],
  logLevel: logLevel.NOTHING,
}).consumer({
  groupId,
  maxWaitTimeInMs: 100,
  sessionTimeout: 6000,
  heartbeatInterval: 500,
  rebalanceTimeout: 10000,
});
consumer.on(consumer.events.GROUP_JOIN, (e) =>
  send({ joined: Object.values(e.payload.memberAssignment).flat().length }),
);
const receiver = fromKafka({ consumer, topics: [topic], fromBeginning: true, commitIntervalMs: 100 });
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
