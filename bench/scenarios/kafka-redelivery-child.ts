// One consumer-group member of the kafka-redelivery scenario, run as its own process (bundled) so it can
// be SIGKILLed. argv: groupId topic recordFile handler commitIntervalMs commitEveryMessages metadataMaxBytes
// handler: `1ms` (a 1 ms sleep), `rand5` (a random 0–5 ms sleep) or `slowkey` (1 ms, but 50 ms for key 0,
// whose unfinished messages hold its partition's committed offset back). Appends one line per handled
// message once its handler has finished: "key seq partition timeMs". Reports progress over IPC.
import { closeSync, openSync, writeSync } from 'node:fs';
import { Kafka, logLevel } from 'kafkajs';
import { keyedDispatch } from '../../src';
import { fromKafka, type KafkaMessage, kafkaKey } from '../../src/kafka';

const [groupId, topic, recordFile, handler, intervalMs, everyMessages, metadataMaxBytes] =
  process.argv.slice(2);
/** The member's session timeout: a SIGKILLed member's partitions move after about this long. */
export const SESSION_TIMEOUT_MS = 10_000;

const kafka = new Kafka({
  clientId: `redelivery-${process.pid}`,
  brokers: ['127.0.0.1:9092'],
  logLevel: logLevel.NOTHING,
});
const receiver = fromKafka({
  consumer: kafka.consumer({
    groupId,
    maxWaitTimeInMs: 100,
    sessionTimeout: SESSION_TIMEOUT_MS,
    heartbeatInterval: 1000,
    rebalanceTimeout: 10_000,
  }),
  admin: kafka.admin(),
  topics: [topic],
  fromBeginning: true,
  commitIntervalMs: Number(intervalMs),
  commitEveryMessages: Number(everyMessages),
  commitMetadataMaxBytes: Number(metadataMaxBytes),
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const fd = openSync(recordFile, 'a');
let handled = 0;
receiver
  .pipe(
    keyedDispatch<KafkaMessage, string, void>({
      key: kafkaKey,
      maxInFlight: 256,
      handle: async (m) => {
        const [key, seq] = (m.value as Buffer).toString().split(':');
        await sleep(
          handler === 'rand5' ? Math.floor(Math.random() * 6) : handler === 'slowkey' && key === '0' ? 50 : 1,
        );
        // Written synchronously: a SIGKILL loses no line of a finished handler.
        writeSync(fd, `${key} ${seq} ${m.partition} ${performance.timeOrigin + performance.now()}\n`);
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
const progress = setInterval(() => process.send?.({ handled }), 50);
process.on('message', async (message) => {
  if (message !== 'close') return;
  clearInterval(progress);
  await receiver.close();
  closeSync(fd);
  process.exit(0);
});
