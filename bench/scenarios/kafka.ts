import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { produceKeyedTopic } from '../kafka-topic';
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
/** Kill-and-restart runs per contender that is killed. */
const KILL_RUNS = 2;
/** Node clients keyedDispatch runs on: the child's contender suffix and the name in the tables. */
const CLIENTS: Array<[string, string]> = [
  ['kafkajs', 'kafkajs'],
  ['platformatic', '@platformatic/kafka'],
];

/** A contender: one process per run, reading the topic in a group of its own. */
interface Contender {
  name: string;
  role: 'parallel-consumer' | 'keyed-dispatch' | 'no-op handler' | 'handler only' | 'baseline' | 'raw';
  /** The in-flight bound (PC's maxConcurrency, keyedDispatch's maxInFlight), when it has one. */
  bound?: number;
  /** The Node client it runs on. */
  client?: string;
  command: string[];
}

function contenders(): Contender[] {
  const pc = parallelConsumerCommand();
  const child = [process.execPath, bundle('scenarios/kafka-child.ts')];
  return [
    ...BOUNDS.flatMap((bound): Contender[] => [
      {
        name: `Parallel Consumer 0.5.3.2, KEY order, maxConcurrency ${bound}`,
        role: 'parallel-consumer',
        bound,
        command: pc,
      },
      ...CLIENTS.map(
        ([id, client]): Contender => ({
          name: `keyedDispatch on ${client}, maxInFlight ${bound}`,
          role: 'keyed-dispatch',
          bound,
          client,
          command: [...child, `keyed-dispatch:${id}`],
        }),
      ),
    ]),
    ...BOUNDS.map(
      (bound): Contender => ({
        name: `the 1 ms handler alone, ${bound} at once, no Kafka (Node's ceiling for it)`,
        role: 'handler only',
        bound,
        command: [...child, 'handler-only'],
      }),
    ),
    ...CLIENTS.flatMap(([id, client]): Contender[] => [
      {
        name: `keyedDispatch on ${client}, maxInFlight 1024, handler that returns at once`,
        role: 'no-op handler',
        bound: 1024,
        client,
        command: [...child, `keyed-dispatch-no-op:${id}`],
      },
      {
        name: `${client} fetch + commit, no handler (raw ceiling)`,
        role: 'raw',
        client,
        command: [...child, `raw:${id}`],
      },
    ]),
    {
      name: `kafkajs eachMessage, partitionsConsumedConcurrently ${PARTITIONS}`,
      role: 'baseline',
      command: [...child, 'each-message:kafkajs'],
    },
  ];
}

const produceTopic = (kafka: Kafka, topic: string): Promise<void> =>
  produceKeyedTopic(kafka, topic, { messages: MESSAGES, keys: KEYS, partitions: PARTITIONS });

const pct = (x: number) => `${Math.round(x * 100)} %`;
const count = (n: number) => n.toLocaleString('en-US');

const METHOD = [
  `**How measured.** One topic of ${count(MESSAGES)} messages (\`key:seq\`, ${count(KEYS)} keys, in order per key, ${PARTITIONS} partitions), produced once; every run reads all of it from the earliest offset, in a fresh process and a consumer group of its own, on the same broker. The rate is timed inside the process from the first handled message to the last (process and JVM start-up and the group join are not counted). ${ROUNDS} rounds; each round runs every contender once, starting one further along the list each round; medians over the rounds (min–max). The machine has 2 cores, shared with other work while this ran: absolute rates move from run to run, the contenders of a round share its conditions.`,
  '',
  '**Contenders.** Handler: Parallel Consumer `Thread.sleep(1)` on its own pool (`maxConcurrency` threads); keyedDispatch `await`s a `setTimeout(1)` (`maxInFlight` at once); eachMessage the same, one message at a time per partition. Parallel Consumer: `ProcessingOrder.KEY`, its default commit mode (periodic, asynchronous), commit interval 1 s (its default is 5 s; the keyedDispatch receiver commits every 1 s). Raw: the client fetching and committing with no handler (kafkajs `eachBatch` with auto-resolve and auto-commit; the @platformatic/kafka message stream with autocommit every 1 s). keyedDispatch on @platformatic/kafka uses the classic group protocol, like the others. The handler alone: the same `setTimeout(1)` handler, as many at once as the bound, over synthetic messages with no Kafka: what one Node thread does with this handler, whatever feeds it. A handler that returns at once: what keyedDispatch itself costs against the raw rate. Every contender parses each message and checks per-key order the same way. Session timeout 10 s, heartbeat 1 s everywhere.',
  '',
  `**Kill.** ${KILL_RUNS} runs per contender and bound: a fresh group; SIGKILL once the process has handled ${count(KILL_POINT)} messages; a new process in the same group finishes the topic. Every handled message is appended to a file as \`key:seq\` (unbuffered, so the kill loses none, and both sides pay for it); handled twice = lines − distinct lines; never handled = ${count(MESSAGES)} − distinct lines. A restarted process that handles nothing for 30 s is stopped and counted as stalled (one stalled Parallel Consumer, left alone while this benchmark was built, handled nothing more in 11 minutes, its missing messages the last ones of a few keys; the same symptom as upstream issue confluentinc/parallel-consumer#875, reported against 0.5.3.1). Seconds of work redone = handled twice ÷ the contender's median rate above: both commit every second, so this shows how much of that second each loses.`,
].join('\n');

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

    // How busy the shared machine was: sampled before every run.
    const load: number[] = [];
    const rates = new Map<string, number[]>(all.map((c) => [c.name, []]));
    let violations = 0;
    for (let r = 0; r < ROUNDS; r++) {
      // Each round starts with the next contender, so none always runs first (or right after another).
      for (let i = 0; i < all.length; i++) {
        const c = all[(i + r) % all.length];
        load.push(loadavg()[0]);
        const result = await measure(c.command, spec(c));
        violations += result.violations;
        rates.get(c.name)?.push(result.rate);
        console.log(`  round ${r + 1} ${c.name}: ${rate(result.rate)} msgs/s`);
      }
    }
    const killed = all.filter((c) => c.role === 'parallel-consumer' || c.role === 'keyed-dispatch');
    const kills = new Map<string, KillResult[]>(killed.map((c) => [c.name, []]));
    const log = join(__dirname, '..', '..', '.bench-out', 'kafka-handled.log');
    for (let r = 0; r < KILL_RUNS; r++) {
      for (const c of killed) {
        const k = await killAndRestart(c.command, spec(c), KILL_POINT, log);
        kills.get(c.name)?.push(k);
        console.log(
          `  kill ${c.name}: ${k.duplicates} handled twice, ${k.lost} never handled${k.stalled ? ' (stalled)' : ''}, ${k.violations} order violations`,
        );
      }
    }
    const admin = kafka.admin();
    await admin.connect();
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();

    const med = (c: Contender | undefined) => median(rates.get(c?.name ?? '') ?? []);
    const pcAt = (bound?: number) => all.find((c) => c.role === 'parallel-consumer' && c.bound === bound);
    const rawOf = (client?: string) => all.find((c) => c.role === 'raw' && c.client === client);
    const rows = all.map((c) => {
      const [lo, hi] = minMax(rates.get(c.name) ?? []);
      const vsPc = c.role === 'keyed-dispatch' ? `${(med(c) / med(pcAt(c.bound))).toFixed(1)}×` : '';
      const ofRaw =
        c.role === 'keyed-dispatch' || c.role === 'no-op handler' ? pct(med(c) / med(rawOf(c.client))) : '';
      return [c.name, `${rate(med(c))}/s`, `${rate(lo)}–${rate(hi)}`, vsPc, ofRaw];
    });
    const killRows = killed.map((c) => {
      const runs = kills.get(c.name) ?? [];
      const twice = runs.map((k) => k.duplicates);
      const stalled = runs.filter((k) => k.stalled).length;
      return [
        c.name,
        twice.map(count).join(', '),
        `${(median(twice) / med(c)).toFixed(2)} s`,
        runs.map((k) => k.lost).join(', '),
        runs.map((k) => k.violations).join(', '),
        `${stalled} of ${runs.length}`,
      ];
    });
    const targets = all
      .filter((c) => c.role === 'keyed-dispatch')
      .map((c) => {
        const vsPc = med(c) / med(pcAt(c.bound));
        const ofRaw = med(c) / med(rawOf(c.client));
        const alone = med(all.find((h) => h.role === 'handler only' && h.bound === c.bound));
        return `- ${c.name}: ${vsPc.toFixed(1)}× Parallel Consumer (target ≥ 4×: ${vsPc >= 4 ? 'met' : 'missed'}), ${pct(ofRaw)} of ${c.client}'s raw consume rate (target ≥ 80 %: ${ofRaw >= 0.8 ? 'met' : 'missed'}); the 1 ms handler alone, ${c.bound} at once with no Kafka, reaches ${pct(alone / med(rawOf(c.client)))} of that raw rate, and keyedDispatch ${pct(med(c) / alone)} of the handler alone.`;
      });
    const [lowLoad, highLoad] = minMax(load);
    const out = [
      METHOD,
      '',
      `One-minute load average before each measured run: ${lowLoad.toFixed(1)}–${highLoad.toFixed(1)} (median ${median(load).toFixed(1)}) on 2 cores.`,
      '',
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
      `SIGKILL at ${count(KILL_POINT)} handled messages, restart in the same group (each run listed):`,
      '',
      table(
        [
          'consumer',
          'handled twice',
          'seconds of work redone (median)',
          'never handled',
          'order violations',
          'stalled',
        ],
        killRows,
      ),
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
        { name: 'Parallel Consumer (KEY order)', values: BOUNDS.map((b) => med(pcAt(b))) },
        {
          name: '1 ms handler alone, no Kafka',
          values: BOUNDS.map((b) => med(all.find((c) => c.role === 'handler only' && c.bound === b))),
        },
        ...CLIENTS.flatMap(([, client]) => [
          {
            name: `keyedDispatch on ${client}`,
            values: BOUNDS.map((b) =>
              med(all.find((c) => c.role === 'keyed-dispatch' && c.client === client && c.bound === b)),
            ),
          },
          { name: `${client} raw (no handler)`, values: BOUNDS.map(() => med(rawOf(client))) },
        ]),
      ],
      yLabel: 'messages / s',
    });
    return `${saveChart('kafka-throughput', chart, 'Kafka throughput: Parallel Consumer, keyedDispatch and the raw consume rate')}\n\n${out}`;
  },
};

export default scenario;
