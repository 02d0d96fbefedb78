// One Kafka consumer run in a fresh process: `kafka-child <contender> --topic t --group g
// --max-in-flight n --messages n --keys n [--log file --kill-point n] [--commit-every-messages n]
// [--handler-ms n] [--fetch-bytes n] [--warm-ups n]` (the Parallel Consumer program takes the same
// arguments but --commit-every-messages, --handler-ms and --fetch-bytes; its handler sleeps 1 ms). With
// --warm-ups, the process first reads the whole topic n times unmeasured, each in a group of its own,
// stopping each pass's consumer before the next: the measured pass runs on code already compiled.
// Prints `{ "rate": msgs/s, "violations": n, "cold": msgs/s, "rss": bytes, "heap": bytes }` on its last
// line once every message has been handled (the first pass's rate, peak RSS, and the peak heap used
// sampled every 100 ms), then exits without leaving the group (each measured run has a group of
// its own).
import { getHeapStatistics } from 'node:v8';
import { Consumer, MessagesStreamModes } from '@platformatic/kafka';
import { Kafka, logLevel } from 'kafkajs';
import { lastValueFrom } from 'rxjs';
import { fromIterable, keyedBatchDispatch, keyedDispatch } from '../../src';
import {
  fromConfluentKafka,
  fromKafka,
  fromPlatformaticKafka,
  type KafkaMessage,
  type KafkaReceiver,
  kafkaKey,
} from '../../src/kafka';
import { Tally } from './kafka-tally';

/** The same group timing for every contender, so a killed member leaves the group as fast. */
const GROUP = { maxWaitTimeInMs: 100, sessionTimeout: 10000, heartbeatInterval: 1000 };
const PARTITIONS = 12;

interface Args {
  topic: string;
  group: string;
  maxInFlight: number;
  /** The receiver's `commitEveryMessages`, when not its default. */
  commitEveryMessages?: number;
  messages: number;
  keys: number;
  tally: Tally;
  /** The consumer's `maxBytesPerPartition` (`--fetch-bytes`), when not the adapter's default. */
  fetchBytes?: number;
}

/** How long the handler waits: `--handler-ms`, 1 by default. */
let handlerMs = 1;
const delay = () => new Promise<void>((resolve) => setTimeout(resolve, handlerMs));

const kafkajs = () =>
  new Kafka({ clientId: 'bench', brokers: ['127.0.0.1:9092'], logLevel: logLevel.NOTHING });

/** A receiver on a @platformatic/kafka consumer of `group`, with the group protocol's `settings`. */
function onPlatformatic(
  { topic, group, commitEveryMessages, fetchBytes }: Args,
  settings: Partial<ConstructorParameters<typeof Consumer>[0]>,
): KafkaReceiver {
  return fromPlatformaticKafka({
    commitEveryMessages,
    consumer: new Consumer({
      clientId: 'bench',
      bootstrapBrokers: ['127.0.0.1:9092'],
      groupId: group,
      ...settings,
      ...(fetchBytes === undefined ? {} : { maxBytesPerPartition: fetchBytes }),
    }),
    topics: [topic],
    fromBeginning: true,
    maxWaitMs: GROUP.maxWaitTimeInMs,
  });
}

/** @confluentinc/kafka-javascript, loaded only by its contenders (it is built apart: scripts/confluent-kafka.sh). */
const confluent = () => require('@confluentinc/kafka-javascript');

/** librdkafka settings of the Confluent contenders: the same fetch wait, on the consumer group protocol. */
const confluentConfig = (group: string, fetchBytes?: number) => ({
  'client.id': 'bench',
  'bootstrap.servers': '127.0.0.1:9092',
  'group.id': group,
  'group.protocol': 'consumer',
  'fetch.wait.max.ms': GROUP.maxWaitTimeInMs,
  ...(fetchBytes === undefined ? {} : { 'fetch.message.max.bytes': fetchBytes }),
});

/** The receivers keyedDispatch runs after, by client. */
const receivers: Record<string, (args: Args) => KafkaReceiver> = {
  kafkajs: ({ topic, group, commitEveryMessages, fetchBytes }) =>
    fromKafka({
      kafka: kafkajs(),
      group: {
        groupId: group,
        ...GROUP,
        ...(fetchBytes === undefined ? {} : { maxBytesPerPartition: fetchBytes }),
      },
      topics: [topic],
      fromBeginning: true,
      commitEveryMessages,
    }),
  // The classic group protocol, so a killed member leaves the group after the same 10 s as the others.
  platformatic: (args) =>
    onPlatformatic(args, {
      sessionTimeout: GROUP.sessionTimeout,
      heartbeatInterval: GROUP.heartbeatInterval,
    }),
  // The consumer group protocol (KIP-848): the broker sets the session timeout.
  'platformatic-consumer': (args) =>
    onPlatformatic(args, { groupProtocol: 'consumer', rebalanceTimeout: 60_000 }),
  confluent: ({ topic, group, commitEveryMessages, fetchBytes }) =>
    fromConfluentKafka({
      client: confluent(),
      config: confluentConfig(group, fetchBytes),
      topics: [topic],
      fromBeginning: true,
      commitEveryMessages,
    }),
};

/** Stops a contender's consumer once its pass has handled every message. */
type Stop = () => Promise<unknown>;
const stopped: Stop = async () => undefined;

/** keyedDispatch after the client's receiver, with the async handler (`--handler-ms`). */
function dispatch(client: string) {
  return async (args: Args): Promise<Stop> => {
    const receiver = receivers[client](args);
    void lastValueFrom(
      receiver.pipe(
        keyedDispatch<KafkaMessage, string, void>({
          key: kafkaKey,
          maxInFlight: args.maxInFlight,
          handle: async (m) => {
            args.tally.started();
            await delay();
            args.tally.record(m.value);
          },
        }),
      ),
      { defaultValue: undefined },
    );
    return () => receiver.close();
  };
}

/** keyedBatchDispatch after the client's receiver: a bulk store of `--handler-ms` per call, whatever the batch size. */
function dispatchBatches(client: string) {
  return async (args: Args): Promise<Stop> => {
    const receiver = receivers[client](args);
    void lastValueFrom(
      receiver.pipe(
        keyedBatchDispatch<KafkaMessage, string, void>({
          key: kafkaKey,
          maxInFlight: args.maxInFlight,
          handle: async (batch) => {
            await delay();
            for (const m of batch) args.tally.record(m.value);
          },
        }),
      ),
      { defaultValue: undefined },
    );
    return () => receiver.close();
  };
}

/** kafkajs' own per-message loop, one message at a time per partition, the async handler. */
async function eachMessageKafkajs({ topic, group, tally }: Args): Promise<Stop> {
  const consumer = kafkajs().consumer({ groupId: group, ...GROUP });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({
    partitionsConsumedConcurrently: PARTITIONS,
    eachMessage: async ({ message }) => {
      tally.started();
      await delay();
      tally.record(message.value);
    },
  });
  return () => consumer.disconnect();
}

/**
 * The floors' per-key promise chain: a message runs the handler after its key's previous one, at most
 * `maxInFlight` at once. Resolves once the message is admitted (after waiting for room), with its end.
 */
function perKeyChain(
  maxInFlight: number,
  tally: Tally,
): (key: string, value: Buffer | null) => Promise<{ end: Promise<void> }> {
  const tails = new Map<string, Promise<void>>();
  const waiting: (() => void)[] = [];
  let inFlight = 0;
  const handle = async (value: Buffer | null) => {
    tally.started();
    await delay();
    tally.record(value);
  };
  return async (key, value) => {
    while (inFlight >= maxInFlight) await new Promise<void>((resolve) => waiting.push(resolve));
    inFlight++;
    const tail = tails.get(key);
    const end = tail === undefined ? handle(value) : tail.then(() => handle(value));
    tails.set(key, end);
    const ended = () => {
      inFlight--;
      if (tails.get(key) === end) tails.delete(key);
      waiting.shift()?.();
    };
    return { end: end.then(ended, ended) };
  };
}

/**
 * The floor on kafkajs: the least code that does keyedDispatch's job by hand. Messages run on a per-key
 * promise chain, at most `maxInFlight` at once across all partitions (a batch waits for room, so the
 * client fetches on only while there is some), and a partition commits past a batch once all of its
 * messages are handled, its commits chained in order. No parking, failure policy, stats or teardown.
 */
async function floorKafkajs({ topic, group, maxInFlight, tally }: Args): Promise<Stop> {
  const consumer = kafkajs().consumer({ groupId: group, ...GROUP });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  const commits = new Map<number, Promise<void>>();
  const run = perKeyChain(maxInFlight, tally);
  await consumer.run({
    autoCommit: false,
    partitionsConsumedConcurrently: 64,
    eachBatchAutoResolve: false,
    eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
      resolveOffset(batch.lastOffset());
      const ends: Promise<void>[] = [];
      for (const message of batch.messages) ends.push((await run(String(message.key), message.value)).end);
      const { partition } = batch;
      const offset = String(Number(batch.lastOffset()) + 1);
      commits.set(
        partition,
        Promise.all([commits.get(partition), ...ends]).then(() =>
          consumer.commitOffsets([{ topic, partition, offset }]),
        ),
      );
      await heartbeat();
    },
  });
  // A commit still on its way after the consumer left would fail: the last ones land first.
  return async () => {
    await Promise.all(commits.values());
    await consumer.disconnect();
  };
}

/**
 * The floor on @confluentinc/kafka-javascript, written as the kafkajs floor is: its native
 * `consume(n)` loop (its `eachBatch` runs on the KafkaJS emulation, which pauses and seeks back on
 * every pause), the same per-key promise chain and bound (a batch waits for room, so consuming goes on
 * only while there is some), and a partition's offset committed once a batch is handled, its commits
 * chained in order.
 */
async function floorConfluent({ topic, group, maxInFlight, tally }: Args): Promise<Stop> {
  const { KafkaConsumer } = confluent();
  const consumer = new KafkaConsumer({
    ...confluentConfig(group),
    'enable.auto.commit': false,
    'auto.offset.reset': 'earliest',
  });
  await new Promise<void>((resolve, reject) =>
    consumer.connect({}, (error: unknown) => (error ? reject(error) : resolve())),
  );
  consumer.setDefaultConsumeTimeout(100);
  consumer.setDefaultIsTimeoutOnlyForFirstMessage(true);
  consumer.subscribe([topic]);
  const commits = new Map<number, Promise<void>>();
  const run = perKeyChain(maxInFlight, tally);
  let stopping = false;
  const loop = (async () => {
    while (!stopping) {
      const messages: Array<{ partition: number; offset: number; key: Buffer; value: Buffer | null }> =
        await new Promise((resolve, reject) =>
          consumer.consume(1000, (error: unknown, found: never) => (error ? reject(error) : resolve(found))),
        );
      const byPartition = new Map<number, typeof messages>();
      for (const m of messages) {
        const batch = byPartition.get(m.partition);
        if (batch === undefined) byPartition.set(m.partition, [m]);
        else batch.push(m);
      }
      for (const [partition, batch] of byPartition) {
        const ends: Promise<void>[] = [];
        for (const message of batch) ends.push((await run(String(message.key), message.value)).end);
        const offset = batch[batch.length - 1].offset + 1;
        commits.set(
          partition,
          Promise.all([commits.get(partition), ...ends]).then(() =>
            consumer.commit([{ topic, partition, offset }]),
          ),
        );
      }
    }
  })();
  return async () => {
    stopping = true;
    await loop;
    await Promise.all(commits.values());
    await new Promise((resolve) => consumer.disconnect(resolve));
  };
}

/** kafkajs fetching and committing with no handler: the ceiling for anything built on it. */
async function rawKafkajs({ topic, group, tally }: Args): Promise<Stop> {
  const consumer = kafkajs().consumer({ groupId: group, ...GROUP });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({
    eachBatch: async ({ batch }) => {
      for (const message of batch.messages) tally.record(message.value);
    },
  });
  return () => consumer.disconnect();
}

/** @platformatic/kafka fetching and committing (every second) with no handler: its ceiling. */
async function rawPlatformatic({ topic, group, tally }: Args): Promise<Stop> {
  const consumer = new Consumer({ clientId: 'bench', bootstrapBrokers: ['127.0.0.1:9092'], groupId: group });
  const stream = await consumer.consume({
    topics: [topic],
    mode: MessagesStreamModes.COMMITTED,
    fallbackMode: 'earliest',
    autocommit: 1000,
    maxWaitTime: GROUP.maxWaitTimeInMs,
    sessionTimeout: GROUP.sessionTimeout,
    heartbeatInterval: GROUP.heartbeatInterval,
  });
  stream.on('data', (message) => tally.record(message.value));
  return async () => {
    await stream.close();
    await consumer.close();
  };
}

const contenders: Record<string, (args: Args) => Promise<Stop>> = {
  ...Object.fromEntries(
    Object.keys(receivers).map((client) => [`keyed-dispatch:${client}`, dispatch(client)]),
  ),
  ...Object.fromEntries(
    Object.keys(receivers).map((client) => [`keyed-batch-dispatch:${client}`, dispatchBatches(client)]),
  ),
  'each-message:kafkajs': eachMessageKafkajs,
  'floor:kafkajs': floorKafkajs,
  'floor:confluent': floorConfluent,
  'raw:kafkajs': rawKafkajs,
  'raw:platformatic': rawPlatformatic,
  'handler-only': handlerOnly,
  'dispatch-only': dispatchOnly,
};

/**
 * No Kafka: the handler alone, `maxInFlight` at once, on synthetic `key:seq` values in the topic's
 * order. Node's ceiling for this handler, whatever feeds it.
 */
async function handlerOnly({ maxInFlight, tally, messages, keys }: Args): Promise<Stop> {
  let next = 0;
  const worker = async () => {
    while (next < messages) {
      const i = next++;
      tally.started();
      await delay();
      tally.record(`${i % keys}:${Math.floor(i / keys)}`);
    }
  };
  for (let w = 0; w < maxInFlight; w++) void worker();
  return stopped;
}

/**
 * No Kafka: keyedDispatch with the same handler, `maxInFlight` in flight, on the topic's messages (a
 * `k<key>` key and a `key:seq` value, as bytes) from an array. What the dispatch reaches before a client
 * shares its thread.
 */
async function dispatchOnly({ maxInFlight, tally, messages, keys }: Args): Promise<Stop> {
  const input = Array.from({ length: messages }, (_, i) => ({
    key: Buffer.from(`k${i % keys}`),
    value: Buffer.from(`${i % keys}:${Math.floor(i / keys)}`),
  }));
  void lastValueFrom(
    fromIterable(input).pipe(
      keyedDispatch({
        key: (m) => m.key.toString(),
        maxInFlight,
        handle: async (m) => {
          tally.started();
          await delay();
          tally.record(m.value);
        },
      }),
    ),
    { defaultValue: undefined },
  );
  return stopped;
}

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
  if (args['handler-ms'] !== undefined) {
    handlerMs = Number(args['handler-ms']);
    if (!(handlerMs > 0))
      throw new Error(`--handler-ms must be a number of milliseconds > 0, got '${args['handler-ms']}'`);
  }
  const fetchBytes = args['fetch-bytes'] === undefined ? undefined : Number(args['fetch-bytes']);
  if (fetchBytes !== undefined && !(Number.isInteger(fetchBytes) && fetchBytes > 0))
    throw new Error(`--fetch-bytes must be an integer number of bytes > 0, got '${args['fetch-bytes']}'`);
  // The peak heap used, sampled: what the process held at once, garbage not yet collected included.
  let heap = 0;
  setInterval(() => {
    heap = Math.max(heap, getHeapStatistics().used_heap_size);
  }, 100).unref();
  const pass = {
    topic: args.topic,
    maxInFlight: Number(args['max-in-flight']),
    commitEveryMessages:
      args['commit-every-messages'] === undefined ? undefined : Number(args['commit-every-messages']),
    messages: Number(args.messages),
    keys: Number(args.keys),
    fetchBytes,
  };
  let cold: number | undefined;
  for (let i = 0; i < Number(args['warm-ups'] ?? 0); i++) {
    const warmUp = new Tally({ messages: pass.messages, keys: pass.keys });
    const stop = await run({ ...pass, group: `${args.group}-warm-up-${i}`, tally: warmUp });
    await warmUp.finished;
    cold ??= warmUp.result().rate;
    await stop();
  }
  const tally = new Tally({
    messages: pass.messages,
    keys: pass.keys,
    log: args.log,
    killPoint: args['kill-point'] === undefined ? undefined : Number(args['kill-point']),
  });
  await run({ ...pass, group: args.group, tally });
  await tally.finished;
  heap = Math.max(heap, getHeapStatistics().used_heap_size);
  const rss = process.resourceUsage().maxRSS * 1024;
  console.log(JSON.stringify({ ...tally.result(), cold, rss, heap }));
  process.exit(0);
}

void main();
