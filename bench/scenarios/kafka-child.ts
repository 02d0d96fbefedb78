// One Kafka consumer run in a fresh process: `kafka-child <contender> --topic t --group g
// --max-in-flight n --messages n --keys n [--log file --kill-point n]` (the same arguments as the
// Parallel Consumer program). Prints `{ "rate": msgs/s, "violations": n }` on its last line once every
// message has been handled, then exits without leaving the group (each measured run has a group of its own).
import { Kafka, logLevel } from 'kafkajs';
import { lastValueFrom } from 'rxjs';
import { keyedDispatch } from '../../src';
import { fromKafka, type KafkaMessage, kafkaKey } from '../../src/kafka';
import { Tally } from './kafka-tally';

/** The same group timing for every contender, so a killed member leaves the group as fast. */
const GROUP = { maxWaitTimeInMs: 100, sessionTimeout: 10000, heartbeatInterval: 1000 };
const PARTITIONS = 12;

interface Args {
  topic: string;
  group: string;
  maxInFlight: number;
  tally: Tally;
}

const delay = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

const kafkajs = () =>
  new Kafka({ clientId: 'bench', brokers: ['127.0.0.1:9092'], logLevel: logLevel.NOTHING });

/** keyedDispatch after fromKafka (kafkajs), a 1 ms async handler. */
async function keyedDispatchKafkajs({ topic, group, maxInFlight, tally }: Args): Promise<void> {
  const receiver = fromKafka({
    consumer: kafkajs().consumer({ groupId: group, ...GROUP }),
    topics: [topic],
    fromBeginning: true,
  });
  void lastValueFrom(
    receiver.pipe(
      keyedDispatch<KafkaMessage, string, void>({
        key: kafkaKey,
        maxInFlight,
        handle: async (m) => {
          await delay();
          tally.record(m.value);
        },
      }),
    ),
    { defaultValue: undefined },
  );
}

/** kafkajs' own per-message loop, one message at a time per partition, a 1 ms async handler. */
async function eachMessageKafkajs({ topic, group, tally }: Args): Promise<void> {
  const consumer = kafkajs().consumer({ groupId: group, ...GROUP });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({
    partitionsConsumedConcurrently: PARTITIONS,
    eachMessage: async ({ message }) => {
      await delay();
      tally.record(message.value);
    },
  });
}

/** kafkajs fetching and committing with no handler: the ceiling for anything built on it. */
async function rawKafkajs({ topic, group, tally }: Args): Promise<void> {
  const consumer = kafkajs().consumer({ groupId: group, ...GROUP });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({
    eachBatch: async ({ batch }) => {
      for (const message of batch.messages) tally.record(message.value);
    },
  });
}

const contenders: Record<string, (args: Args) => Promise<void>> = {
  'keyed-dispatch:kafkajs': keyedDispatchKafkajs,
  'each-message:kafkajs': eachMessageKafkajs,
  'raw:kafkajs': rawKafkajs,
};

function parse(argv: string[]): Record<string, string> {
  const args: Record<string, string> = {};
  for (let i = 0; i + 1 < argv.length; i += 2) args[argv[i].replace(/^--/, '')] = argv[i + 1];
  return args;
}

async function main(): Promise<void> {
  const [contender, ...rest] = process.argv.slice(2);
  const run = contenders[contender];
  if (!run) throw new Error(`unknown contender '${contender}'; known: ${Object.keys(contenders).join(', ')}`);
  const args = parse(rest);
  const tally = new Tally({
    messages: Number(args.messages),
    keys: Number(args.keys),
    log: args.log,
    killPoint: args['kill-point'] === undefined ? undefined : Number(args['kill-point']),
  });
  await run({ topic: args.topic, group: args.group, maxInFlight: Number(args['max-in-flight']), tally });
  await tally.finished;
  console.log(JSON.stringify(tally.result()));
  process.exit(0);
}

void main();
