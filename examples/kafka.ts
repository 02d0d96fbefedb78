/**
 * Bills account events from Kafka: every account's events are handled one at a time, in order, while
 * different accounts run in parallel; offsets are committed only once events have been handled.
 * Start more copies of this process (same group) to scale out: the group splits the partitions.
 *
 *   scripts/brokers/kafka.sh start
 *   npx ts-node --transpile-only examples/kafka.ts
 */
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { lastValueFrom } from 'rxjs';
import { keyedDispatch } from '../src';
import { fromKafka, type KafkaMessage, kafkaKey, keyedProducer } from '../src/kafka';

interface AccountEvent {
  account: string;
  seq: number;
  cents: number;
}

const TOPIC = 'example-account-events';
const EVENTS = 10_000;
const ACCOUNTS = 100;

async function main(): Promise<void> {
  const kafka = new Kafka({ clientId: 'billing', brokers: ['127.0.0.1:9092'], logLevel: logLevel.WARN });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [{ topic: TOPIC, numPartitions: 12, replicationFactor: 1 }],
    waitForLeaders: true,
  });
  await admin.disconnect();

  // Keyed by account: each account stays in one partition, so it reaches one group member, in order.
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, idempotent: true });
  await producer.connect();
  const events = keyedProducer<AccountEvent>(producer, { topic: TOPIC, key: (e) => e.account });
  const runId = Date.now();
  for (let i = 0; i < EVENTS; i += 1000) {
    await events.send(
      Array.from({ length: 1000 }, (_, j) => ({
        account: `acct-${(i + j) % ACCOUNTS}`,
        seq: i + j,
        cents: runId % 100,
      })),
    );
  }
  await producer.disconnect();

  const receiver = fromKafka({
    consumer: kafka.consumer({ groupId: 'billing', maxWaitTimeInMs: 100 }),
    // Reads commit metadata back, so work finished before a restart is not billed twice.
    admin: kafka.admin(),
    topics: [TOPIC],
    fromBeginning: true,
  });
  const balances = new Map<string, number>();
  let handled = 0;
  const billed = receiver.pipe(
    keyedDispatch<KafkaMessage, string, AccountEvent>({
      key: kafkaKey,
      maxInFlight: 512,
      handle: async (message) => {
        const event: AccountEvent = JSON.parse(message.value!.toString());
        await new Promise((resolve) => setTimeout(resolve, 1)); // a write to the account's store
        balances.set(event.account, (balances.get(event.account) ?? 0) + event.cents);
        if (++handled === EVENTS) void receiver.close(); // a demo stops here; a service stops on SIGTERM
        return event;
      },
    }),
  );
  process.once('SIGTERM', () => void receiver.close());
  const started = Date.now();
  await lastValueFrom(billed, { defaultValue: undefined });
  console.log(
    `billed ${handled} events of ${balances.size} accounts in ${Date.now() - started} ms; offsets committed`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
