import { Kafka, logLevel } from 'kafkajs';
import { type Observable, type OperatorFunction, toArray } from 'rxjs';
import { fromIterable, keyedBatchDispatch, keyedDispatch } from '../../src';
import {
  type Alternation,
  alternate,
  inFreshProcess,
  type Rounds,
  type Run,
  ratios,
  series,
} from '../harness';
import { produceKeyedTopic } from '../kafka-topic';
import type { Report, Scenario } from '../report';
import { median, rate, ratioCell, table, times } from '../stats';
import { WARM_UPS } from './kafka';
import { parallelConsumerCommand } from './kafka-pc';
import { childCommand, measure } from './kafka-runs';

/**
 * Per-key batches for a bulk store that costs 1 ms per call whatever the batch size: keyedBatchDispatch
 * against one message per call (keyedDispatch), as each key's messages come in runs of 1 to 64; then
 * the same on Kafka, against Confluent Parallel Consumer's batches at the same in-flight bound.
 */

interface Message {
  readonly key: number;
  readonly seq: number;
}

const KEYS = 1_000;
const WINDOW = 256;
/** Consecutive messages of one key in the traffic; 1 is keys taking turns message by message. */
const RUN_LENGTHS = [1, 8, 32, 64];
/** The run length of the headline and of the Kafka topic: an aggregate's events written together. */
const HEADLINE_RUN = 32;
/** Messages a run handles: a batch contender at ~200 k msgs/s, one message per call far slower. */
const MESSAGES = { batches: 100_000, messages: 20_000 };
/** PC: threads × records per call = the same 256 in flight; 64 per call as our default `maxBatch`. */
const PC_BATCH = { maxConcurrency: 4, batchSize: 64 };
const KAFKA_MESSAGES = 64_000;
const PARTITIONS = 12;

interface Cell extends Alternation {
  runLength: number;
}

/** The bulk store: one round trip of 1 ms per call, however many messages it carries. */
const store = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

/**
 * `count` messages over `KEYS` keys, each key's in runs of `runLength` (its sequence numbers going on
 * from run to run), the keys' runs in a fixed scattered order.
 */
function traffic(count: number, runLength: number): Message[] {
  const seqs = new Int32Array(KEYS);
  const out: Message[] = [];
  for (let turn = 0; out.length < count; turn++) {
    // 7,919 is prime to 1,000: every key takes its turn once in 1,000 turns, scattered.
    const key = (turn * 7_919) % KEYS;
    for (let i = 0; i < runLength && out.length < count; i++) out.push({ key, seq: seqs[key]++ });
  }
  return out;
}

/** Handles all of `input` through `operator`; its msgs/s and the messages per store call. */
async function timed(
  input: Message[],
  operator: (calls: { n: number }) => OperatorFunction<Message, number>,
): Promise<Record<string, number>> {
  const calls = { n: 0 };
  const started = performance.now();
  const handled = await new Promise<number[]>((resolve, reject) =>
    (fromIterable(input).pipe(operator(calls), toArray()) as Observable<number[]>).subscribe({
      next: resolve,
      error: reject,
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const n = handled.reduce((a, b) => a + b, 0);
  if (n !== input.length) throw new Error(`handled ${n} of ${input.length}`);
  return { rate: n / seconds, perCall: n / calls.n };
}

/** The cell of one run length, in its own process: per-key batches against one message per call. */
export function cell({ runLength }: Cell): Record<string, Run> {
  const key = (m: Message) => m.key;
  const forBatches = traffic(MESSAGES.batches, runLength);
  const forMessages = traffic(runLength === 1 ? MESSAGES.batches : MESSAGES.messages, runLength);
  return {
    batches: () =>
      timed(forBatches, (calls) =>
        keyedBatchDispatch({
          key,
          maxInFlight: WINDOW,
          handle: async (batch: Message[]) => {
            calls.n++;
            await store();
            return batch.length;
          },
        }),
      ),
    messages: () =>
      timed(forMessages, (calls) =>
        keyedDispatch({
          key,
          maxInFlight: WINDOW,
          handle: async () => {
            calls.n++;
            await store();
            return 1;
          },
        }),
      ),
  };
}

/** The Kafka contenders: a process per run, each with its command and its in-flight bound. */
function kafkaContenders(): Record<string, { label: string; command: string[]; bound: number }> {
  const pc = parallelConsumerCommand();
  const child = childCommand();
  return {
    pcBatches: {
      label: `Parallel Consumer 0.5.3.2, KEY order, batchSize ${PC_BATCH.batchSize} × maxConcurrency ${PC_BATCH.maxConcurrency}`,
      command: [...pc, '--batch-size', String(PC_BATCH.batchSize)],
      bound: PC_BATCH.maxConcurrency,
    },
    pcMessages: {
      label: `Parallel Consumer 0.5.3.2, KEY order, one record per call, maxConcurrency ${WINDOW}`,
      command: pc,
      bound: WINDOW,
    },
    batches: {
      label: `keyedBatchDispatch on kafkajs, maxInFlight ${WINDOW}`,
      command: [...child, 'keyed-batch-dispatch:kafkajs'],
      bound: WINDOW,
    },
    messages: {
      label: `keyedDispatch on kafkajs (one message per call), maxInFlight ${WINDOW}`,
      command: [...child, 'keyed-dispatch:kafkajs'],
      bound: WINDOW,
    },
  };
}

/** Every Kafka contender over one topic whose keys' messages come in runs of `HEADLINE_RUN`. */
async function onKafka(rounds: number): Promise<{ rounds: Rounds; violations: number }> {
  const kafka = new Kafka({ clientId: 'bench', brokers: ['127.0.0.1:9092'], logLevel: logLevel.NOTHING });
  const topic = `batches-${process.pid}-${Date.now().toString(36)}`;
  await produceKeyedTopic(kafka, topic, {
    messages: KAFKA_MESSAGES,
    keys: KEYS,
    partitions: PARTITIONS,
    runLength: HEADLINE_RUN,
  });
  let groups = 0;
  let violations = 0;
  const runs: Record<string, Run> = Object.fromEntries(
    Object.entries(kafkaContenders()).map(([id, c]) => [
      id,
      async () => {
        const spec = {
          topic,
          group: `batches-${process.pid}-${groups++}`,
          maxInFlight: c.bound,
          messages: KAFKA_MESSAGES,
          keys: KEYS,
        };
        const result = await measure([...c.command, '--warm-ups', String(WARM_UPS)], spec);
        violations += result.violations;
        console.error(`  kafka ${id}: ${rate(result.rate)} msgs/s`);
        return { rate: result.rate };
      },
    ]),
  );
  try {
    return { rounds: await alternate(runs, { warmups: 0, rounds }), violations };
  } finally {
    const admin = kafka.admin();
    await admin.connect();
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();
  }
}

async function run({ rounds = 5, args }: { rounds?: number; args: string[] }): Promise<Report> {
  const cells = new Map<number, Rounds>();
  for (const runLength of RUN_LENGTHS) {
    console.error(`batches: runs of ${runLength}`);
    cells.set(runLength, inFreshProcess('scenarios/batches', { runLength, warmups: 1, rounds }));
  }
  const figures: Record<string, string> = {};
  const rows = RUN_LENGTHS.map((runLength) => {
    const rs = cells.get(runLength) as Rounds;
    const vs = ratios(rs, 'batches', 'messages');
    figures[`runs-${runLength}`] = times(median(vs));
    return [
      runLength === 1 ? '1 (keys take turns)' : String(runLength),
      rate(median(series(rs, 'batches'))),
      median(series(rs, 'batches', 'perCall')).toFixed(1),
      rate(median(series(rs, 'messages'))),
      ratioCell(vs),
    ];
  });
  const kafkaRounds = Math.max(1, Math.min(rounds, 3));
  const kafka = args.includes('--no-kafka') ? null : await onKafka(kafkaRounds);
  const kafkaRows: string[][] = [];
  if (kafka !== null) {
    const rs = kafka.rounds;
    figures['kafka.pc'] = times(median(ratios(rs, 'batches', 'pcBatches')));
    figures['kafka.messages'] = times(median(ratios(rs, 'batches', 'messages')));
    for (const [id, c] of Object.entries(kafkaContenders())) {
      kafkaRows.push([
        c.label,
        rate(median(series(rs, id))),
        id === 'batches' ? '' : ratioCell(ratios(rs, 'batches', id)),
      ]);
    }
  }
  const med = (runLength: number, id: string) => median(series(cells.get(runLength) as Rounds, id));
  return {
    method: [
      `A bulk store that costs 1 ms per call whatever the batch size (\`await\` a \`setTimeout(1)\`): **keyedBatchDispatch** hands it each key's waiting messages at once (\`maxBatch\` 64, the default), **keyedDispatch** one message per call. ${KEYS.toLocaleString('en-US')} keys, window ${WINDOW}, the other options at their defaults (\`maxPerKey\` 64), event-loop lanes. Each key's messages come in runs: a run of 32 is an aggregate's 32 events appended by one command, or one account's statement lines; with runs of 1 the keys take turns message by message, and a key never has more than one message waiting. Each run length is a fresh process; its two contenders alternate (one unmeasured run each, then ${rounds} rounds, the order rotated), over ${MESSAGES.batches.toLocaleString('en-US')} messages for batches and ${MESSAGES.messages.toLocaleString('en-US')} for one message per call (${MESSAGES.batches.toLocaleString('en-US')} with runs of 1) from an array; ratios are medians of per-round ratios (min–max).`,
      '',
      `**Kafka.** One topic of ${KAFKA_MESSAGES.toLocaleString('en-US')} messages (\`key:seq\`, ${KEYS.toLocaleString('en-US')} keys in runs of ${HEADLINE_RUN}, ${PARTITIONS} partitions) on one local broker, read from the start by a fresh process per run (a JVM for Parallel Consumer), measured on its pass after ${WARM_UPS} unmeasured ones (warm-ups, each pass in a group of its own), ${kafkaRounds} rounds, the order rotated; the rate runs from the first handled message to the last. The same bulk store: \`Thread.sleep(1)\` per call for Parallel Consumer (KEY order: a key's records one at a time; its \`batchSize\` groups records of different keys, ${PC_BATCH.batchSize} per call on ${PC_BATCH.maxConcurrency} threads, the same ${WINDOW} in flight), \`setTimeout(1)\` per call for keyedBatchDispatch and keyedDispatch on kafkajs. Every contender checks per-key order${kafka === null ? '' : `; violations in all runs: ${kafka.violations}`}.`,
    ].join('\n'),
    tables: [
      table(
        [
          'messages in a key’s runs',
          'keyedBatchDispatch msgs/s',
          'messages per call',
          'keyedDispatch msgs/s',
          'keyedBatchDispatch ÷ keyedDispatch',
        ],
        rows,
      ),
      kafka === null
        ? 'Kafka: not run (`--no-kafka`).'
        : `Kafka, runs of ${HEADLINE_RUN}:\n\n${table(['contender', 'msgs/s', 'keyedBatchDispatch ÷ it'], kafkaRows)}`,
    ].join('\n\n'),
    figures,
    chart: {
      title: `Bulk store of 1 ms per call, ${KEYS.toLocaleString('en-US')} keys, window ${WINDOW} (median msgs/s)`,
      categories: RUN_LENGTHS.map((n) => `runs of ${n}`),
      series: [
        { name: 'keyedBatchDispatch', values: RUN_LENGTHS.map((n) => med(n, 'batches')) },
        { name: 'keyedDispatch, one message per call', values: RUN_LENGTHS.map((n) => med(n, 'messages')) },
      ],
      yLabel: 'messages / s',
    },
    headline: [
      [
        `bulk store of 1 ms per call, ${KEYS.toLocaleString('en-US')} keys, runs of ${HEADLINE_RUN}: throughput of per-key batches`,
        `**{runs-${HEADLINE_RUN}}** one message per call`,
        kafka === null ? '—' : '**{kafka.pc}** Confluent Parallel Consumer with `batchSize`, on Kafka',
      ],
    ],
  };
}

const scenario: Scenario = {
  title:
    'per-key batches for a bulk store of 1 ms per call, against one message per call and Parallel Consumer',
  run,
};

export default scenario;
