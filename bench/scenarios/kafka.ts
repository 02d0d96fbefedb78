import { join } from 'node:path';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { keyedProducer } from '../../src/kafka';
import { bundle, median, minMax, rate, type Scenario, table } from '../lib';
import { barChart, saveChart } from '../svg';
import { parallelConsumerCommand } from './kafka-pc';
import { type KillResult, killAndRestart, measure, type RunSpec } from './kafka-runs';

const MESSAGES = 100_000;
const KEYS = 1000;
const PARTITIONS = 12;
/** Rounds of every contender, alternating: the machine is shared, so few. */
const ROUNDS = 3;
const BOUNDS = [256, 1024];
const KILL_POINT = 50_000;

/** A contender: one process per run, reading the topic in a group of its own. */
interface Contender {
  name: string;
  /** The in-flight bound (PC's maxConcurrency, keyedDispatch's maxInFlight), when it has one. */
  bound?: number;
  /** The raw consume rate of the client it runs on, for the "% of raw" column. */
  raw?: string;
  command: string[];
  /** Killed at KILL_POINT and restarted, for duplicates. */
  kill?: boolean;
}

function contenders(): Contender[] {
  const pc = parallelConsumerCommand();
  const child = [process.execPath, bundle('scenarios/kafka-child.ts')];
  const rawKafkajs = 'kafkajs fetch + commit, no handler (raw ceiling)';
  return [
    ...BOUNDS.flatMap((bound): Contender[] => [
      {
        name: `Parallel Consumer 0.5.3.2, KEY order, maxConcurrency ${bound}`,
        bound,
        command: pc,
        kill: true,
      },
      {
        name: `keyedDispatch on kafkajs, maxInFlight ${bound}`,
        bound,
        raw: rawKafkajs,
        command: [...child, 'keyed-dispatch:kafkajs'],
        kill: true,
      },
    ]),
    {
      name: `kafkajs eachMessage, partitionsConsumedConcurrently ${PARTITIONS}`,
      command: [...child, 'each-message:kafkajs'],
    },
    { name: rawKafkajs, command: [...child, 'raw:kafkajs'] },
  ];
}

/** Creates the topic and produces MESSAGES `key:seq` values over KEYS keys, in order per key. */
async function produceTopic(kafka: Kafka, topic: string): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [{ topic, numPartitions: PARTITIONS, replicationFactor: 1 }],
    waitForLeaders: true,
  });
  await admin.disconnect();
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
}

const pct = (x: number) => `${Math.round(x * 100)} %`;

const scenario: Scenario = {
  title: `Kafka: ${MESSAGES / 1000}k messages over ${KEYS} keys on ${PARTITIONS} partitions, 1 ms handler, against Confluent Parallel Consumer`,
  async run() {
    // The runner skips this scenario when no broker answers on 127.0.0.1:9092 (see bench/run.ts).
    const kafka = new Kafka({ clientId: 'bench', brokers: ['127.0.0.1:9092'], logLevel: logLevel.NOTHING });
    const topic = `bench-${process.pid}-${Date.now().toString(36)}`;
    await produceTopic(kafka, topic);
    const all = contenders();
    let groups = 0;
    const spec = (c: Contender): RunSpec => ({
      topic,
      group: `bench-${process.pid}-${groups++}`,
      maxInFlight: c.bound ?? 0,
      messages: MESSAGES,
      keys: KEYS,
    });

    const rates = new Map<string, number[]>(all.map((c) => [c.name, []]));
    let violations = 0;
    for (let r = 0; r < ROUNDS; r++) {
      // Each round starts with the next contender, so none always runs first (or right after another).
      for (let i = 0; i < all.length; i++) {
        const c = all[(i + r) % all.length];
        const result = await measure(c.command, spec(c));
        violations += result.violations;
        rates.get(c.name)?.push(result.rate);
        console.log(`  round ${r + 1} ${c.name}: ${rate(result.rate)} msgs/s`);
      }
    }
    const kills = new Map<string, KillResult>();
    for (const c of all.filter((c) => c.kill)) {
      const result = await killAndRestart(
        c.command,
        spec(c),
        KILL_POINT,
        join(__dirname, '..', '..', '.bench-out', 'kafka-handled.log'),
      );
      kills.set(c.name, result);
      console.log(
        `  kill ${c.name}: ${result.duplicates} duplicates, ${result.lost} never handled${result.stalled ? ' (stalled)' : ''}, ${result.violations} order violations`,
      );
    }
    const admin = kafka.admin();
    await admin.connect();
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();

    const med = (name: string) => median(rates.get(name) ?? []);
    const pcAt = (bound: number) =>
      all.find((c) => c.bound === bound && c.command[0] === 'java') as Contender;
    const rows = all.map((c) => {
      const [lo, hi] = minMax(rates.get(c.name) ?? []);
      const vsPc =
        c.bound !== undefined && c.command[0] !== 'java'
          ? `${(med(c.name) / med(pcAt(c.bound).name)).toFixed(1)}×`
          : '';
      return [
        c.name,
        `${rate(med(c.name))}/s`,
        `${rate(lo)}–${rate(hi)}`,
        vsPc,
        c.raw ? pct(med(c.name) / med(c.raw)) : '',
      ];
    });
    const killRows = [...kills].map(([name, k]) => [
      name,
      k.duplicates.toLocaleString('en-US'),
      k.stalled ? `${k.lost} (stopped: nothing handled for 30 s)` : k.lost,
      k.violations,
    ]);
    const ours = all.filter((c) => c.raw !== undefined);
    const targets = ours.map((c) => {
      const vsPc = med(c.name) / med(pcAt(c.bound as number).name);
      const ofRaw = med(c.name) / med(c.raw as string);
      return `- ${c.name}: ${vsPc.toFixed(1)}× Parallel Consumer (target ≥ 4×: ${vsPc >= 4 ? 'met' : 'missed'}), ${pct(ofRaw)} of the raw consume rate (target ≥ 80 %: ${ofRaw >= 0.8 ? 'met' : 'missed'}).`;
    });
    const out = [
      table(
        [
          'consumer',
          `median msgs/s (${ROUNDS} rounds)`,
          'range',
          'vs Parallel Consumer, same bound',
          '% of raw, same client',
        ],
        rows,
      ),
      '',
      `Per-key order violations in the measured runs (all rounds, all contenders): ${violations}.`,
      '',
      `After a SIGKILL at ${KILL_POINT.toLocaleString('en-US')} handled messages and a restart in the same group (one run each):`,
      '',
      table(['consumer', 'handled twice', 'never handled', 'order violations'], killRows),
      '',
      'Targets:',
      '',
      ...targets,
    ].join('\n');
    console.log(out);

    const chart = barChart({
      title: `Kafka, ${PARTITIONS} partitions, 1 ms handler (median of ${ROUNDS} rounds)`,
      categories: BOUNDS.map((b) => `in-flight bound ${b}`),
      series: [
        { name: 'Parallel Consumer (KEY order)', values: BOUNDS.map((b) => med(pcAt(b).name)) },
        ...[...new Set(ours.map((c) => c.raw as string))].flatMap((raw) => {
          const client = raw.split(' ')[0];
          return [
            {
              name: `keyedDispatch on ${client}`,
              values: BOUNDS.map((b) => med(ours.find((c) => c.raw === raw && c.bound === b)?.name ?? '')),
            },
            { name: `${client} raw (no handler)`, values: BOUNDS.map(() => med(raw)) },
          ];
        }),
      ],
      yLabel: 'messages / s',
    });
    return `${saveChart('kafka-throughput', chart, 'Kafka throughput: Parallel Consumer, keyedDispatch and the raw consume rate')}\n\n${out}`;
  },
};

export default scenario;
