import { type Consumer, Kafka, logLevel, Partitioners } from 'kafkajs';
import { lastValueFrom } from 'rxjs';
import { keyedDispatch } from '../../src';
import { fromKafka, type KafkaMessage, kafkaKey, keyedProducer } from '../../src/kafka';
import { median, minMax, rate, type Scenario, table } from '../lib';
import { barChart, saveChart } from '../svg';

const MESSAGES = 100_000;
const KEYS = 1000;
const PARTITIONS = 12;
const RUNS = 5;
const GROUP = { maxWaitTimeInMs: 100, sessionTimeout: 10000, heartbeatInterval: 1000 };

const delay = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

/** Counts handled messages, checks per-key order, and times first to last message. */
class Tally {
  private next = new Int32Array(KEYS);
  private count = 0;
  private first = 0;
  violations = 0;
  private done!: () => void;
  readonly finished = new Promise<void>((resolve) => {
    this.done = resolve;
  });

  record(value: Buffer | null): void {
    const [key, seq] = (value as Buffer).toString().split(':').map(Number);
    if (this.count === 0) this.first = performance.now();
    if (this.next[key] !== seq) this.violations++;
    this.next[key] = seq + 1;
    if (++this.count === MESSAGES) this.done();
  }

  /** msgs/s from the first message to the last. */
  rate(): number {
    return (MESSAGES * 1000) / (performance.now() - this.first);
  }
}

let groups = 0;

async function viaKeyedDispatch(kafka: Kafka, topic: string, maxInFlight: number): Promise<[number, number]> {
  const tally = new Tally();
  const receiver = fromKafka({
    consumer: kafka.consumer({ groupId: `bench-kd-${process.pid}-${groups++}`, ...GROUP }),
    topics: [topic],
    fromBeginning: true,
  });
  const output = lastValueFrom(
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
  await tally.finished;
  const r = tally.rate();
  await receiver.close();
  await output;
  return [r, tally.violations];
}

async function viaEachMessage(kafka: Kafka, topic: string): Promise<[number, number]> {
  const tally = new Tally();
  const consumer: Consumer = kafka.consumer({ groupId: `bench-em-${process.pid}-${groups++}`, ...GROUP });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({
    partitionsConsumedConcurrently: PARTITIONS,
    eachMessage: async ({ message }) => {
      await delay();
      tally.record(message.value);
    },
  });
  await tally.finished;
  const r = tally.rate();
  await consumer.disconnect();
  return [r, tally.violations];
}

const scenario: Scenario = {
  title: `Kafka: ${MESSAGES / 1000}k messages over ${KEYS} keys on ${PARTITIONS} partitions, 1 ms async handler`,
  async run() {
    // The runner skips this scenario when no broker answers on 127.0.0.1:9092 (see bench/run.ts).
    const kafka = new Kafka({ clientId: 'bench', brokers: ['127.0.0.1:9092'], logLevel: logLevel.NOTHING });
    const topic = `bench-${process.pid}-${Date.now().toString(36)}`;
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      topics: [{ topic, numPartitions: PARTITIONS, replicationFactor: 1 }],
      waitForLeaders: true,
    });
    const producer = kafka.producer({
      createPartitioner: Partitioners.DefaultPartitioner,
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();
    const send = keyedProducer<[number, number]>(producer, {
      topic,
      key: ([key]) => `k${key}`,
      value: ([key, seq]) => `${key}:${seq}`,
    });
    for (let seq = 0; seq < MESSAGES / KEYS; seq++)
      await send.send(Array.from({ length: KEYS }, (_, k): [number, number] => [k, seq]));
    await producer.disconnect();

    const contenders: Array<[string, () => Promise<[number, number]>]> = [
      [`eachMessage, partitionsConsumedConcurrently ${PARTITIONS}`, () => viaEachMessage(kafka, topic)],
      ['keyedDispatch (fromKafka), maxInFlight 256', () => viaKeyedDispatch(kafka, topic, 256)],
      ['keyedDispatch (fromKafka), maxInFlight 1024', () => viaKeyedDispatch(kafka, topic, 1024)],
    ];
    const results = new Map<string, number[]>(contenders.map(([name]) => [name, []]));
    let violations = 0;
    for (let r = 0; r < RUNS; r++) {
      for (const [name, run] of contenders) {
        const [perSecond, v] = await run();
        violations += v;
        results.get(name)?.push(perSecond);
        console.log(`  run ${r + 1} ${name}: ${rate(perSecond)} msgs/s`);
      }
    }
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();

    const baseline = median(results.get(contenders[0][0]) ?? []);
    const rows = contenders.map(([name]) => {
      const values = results.get(name) ?? [];
      const [lo, hi] = minMax(values);
      return [
        name,
        `${rate(median(values))}/s`,
        `${rate(lo)}–${rate(hi)}`,
        `${(median(values) / baseline).toFixed(1)}×`,
      ];
    });
    const out = [
      table(['consumer', `median msgs/s (${RUNS} runs)`, 'range', 'vs eachMessage'], rows),
      '',
      `Per-key order violations seen (all runs, all contenders): ${violations}. Each run is a fresh consumer group reading the same ` +
        `pre-produced topic from the beginning; the rate is timed from the first handled message to the last. Target: keyedDispatch ≥ 5× eachMessage.`,
    ].join('\n');
    console.log(out);
    const chart = barChart({
      title: `Kafka, ${PARTITIONS} partitions, 1 ms async handler (median of ${RUNS} runs)`,
      categories: contenders.map(([name]) =>
        name.replace(', partitionsConsumedConcurrently', ', concurrency'),
      ),
      series: [{ name: 'msgs/s', values: contenders.map(([name]) => median(results.get(name) ?? [])) }],
      yLabel: 'messages / s',
    });
    return `${saveChart('kafka-throughput', chart, 'Kafka throughput by consumer')}\n\n${out}`;
  },
};

export default scenario;
