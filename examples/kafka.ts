/**
 * Bills account events from Kafka: every account's events are handled one at a time, in order, while
 * different accounts run in parallel; offsets are committed only once events have been handled.
 * It stops after billing as many events as it sent. With `--forever` it keeps consuming until Ctrl-C:
 * start several copies that way (same group) to scale out. The group splits the partitions, and with the
 * consumer group protocol (`groupProtocol: 'consumer'`, Kafka 4+) a member joining or leaving moves only
 * the partitions that change owner, each once its running events have finished.
 *
 *   scripts/brokers/kafka.sh start
 *   npm run example -- kafka
 *   npm run example -- kafka --forever  # in two terminals: the group splits the work
 */
import { Admin, Consumer, Producer } from '@platformatic/kafka';
import { lastValueFrom } from 'rxjs';
import { keyedDispatch, retryPolicy } from '../src';
import { fromPlatformaticKafka, type KafkaMessage, kafkaKey } from '../src/kafka';

interface AccountEvent {
  /** The run that sent it: a run stops once its own events are billed. */
  run: number;
  account: string;
  seq: number;
  cents: number;
}

const BROKERS = ['127.0.0.1:9092'];
const TOPIC = 'example-account-events';
const EVENTS = 10_000;
const ACCOUNTS = 100;
const FOREVER = process.argv.includes('--forever');

async function main(): Promise<void> {
  await ensureTopic();

  // Keyed by account: each account stays in one partition, so it reaches one group member, in order.
  const producer = new Producer({ clientId: 'billing', bootstrapBrokers: BROKERS, idempotent: true });
  const runId = Date.now();
  for (let i = 0; i < EVENTS; i += 1000) {
    await sentSoon(() =>
      producer.send({
        messages: Array.from({ length: 1000 }, (_, j) => {
          const event: AccountEvent = {
            run: runId,
            account: `acct-${(i + j) % ACCOUNTS}`,
            seq: i + j,
            cents: runId % 100,
          };
          return { topic: TOPIC, key: Buffer.from(event.account), value: Buffer.from(JSON.stringify(event)) };
        }),
      }),
    );
  }
  await producer.close();

  const receiver = fromPlatformaticKafka({
    consumer: new Consumer({
      clientId: 'billing',
      bootstrapBrokers: BROKERS,
      groupId: 'billing',
      groupProtocol: 'consumer',
    }),
    topics: [TOPIC],
    fromBeginning: true,
  });
  const balances = new Map<string, number>();
  let handled = 0;
  let handledOfThisRun = 0;
  const billed = receiver.pipe(
    keyedDispatch<KafkaMessage, string, AccountEvent>({
      key: kafkaKey,
      maxInFlight: 512,
      handle: async (message) => {
        const event: AccountEvent = JSON.parse(message.value!.toString());
        await new Promise((resolve) => setTimeout(resolve, 1)); // a write to the account's store
        balances.set(event.account, (balances.get(event.account) ?? 0) + event.cents);
        handled++;
        // A demo stops once its own events are billed (after any that earlier runs left unbilled, which come
        // first in their partitions); a service (or `--forever`) stops on a signal.
        if (event.run === runId && ++handledOfThisRun === EVENTS && !FOREVER) void receiver.close();
        return event;
      },
      // Retried 5 times in its account's mailbox, then left uncommitted for a later run; left out, a
      // failing record is retried until it succeeds.
      failurePolicy: retryPolicy({ maxAttempts: 5 }),
    }),
  );
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void receiver.close());
  const started = Date.now();
  await lastValueFrom(billed, { defaultValue: undefined });
  const others = handled - handledOfThisRun;
  console.log(
    `billed ${handled} events of ${balances.size} accounts in ${Date.now() - started} ms; offsets committed` +
      (others > 0 ? ` (${others} of them sent by another run)` : ''),
  );
}

/** Creates the topic unless it exists (another copy of this process may be creating it right now). */
async function ensureTopic(): Promise<void> {
  const admin = new Admin({ clientId: 'billing', bootstrapBrokers: BROKERS });
  try {
    if (!(await admin.listTopics()).includes(TOPIC)) {
      await admin.createTopics({ topics: [TOPIC], partitions: 12, replicas: 1 }).catch((err) => {
        if (!err.errors?.some((e: { apiId?: string }) => e.apiId === 'TOPIC_ALREADY_EXISTS')) throw err;
      });
    }
  } finally {
    await admin.close();
  }
}

/**
 * Sends, and tries again a few times if the send fails: right after a topic is created, the broker
 * answers the first sends with an error for a moment.
 */
async function sentSoon(send: () => Promise<unknown>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await send();
      return;
    } catch (err) {
      if (attempt === 5) throw err;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1); // a client may still hold a connection open: a failed run must not hang
});
