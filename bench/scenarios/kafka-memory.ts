import { Kafka, logLevel } from 'kafkajs';
import { alternate, type Measures, ratios, series } from '../harness';
import { produceKeyedTopic } from '../kafka-topic';
import type { Report, Scenario } from '../report';
import { median, minMax, rate, ratioCell, table, times } from '../stats';
import { childCommand, measure } from './kafka-runs';

/**
 * Memory of a consumer that reads a large backlog: 1,000,000 small records, window 1,024, no option set,
 * on each client set-up: peak RSS and peak heap used beside the rate. `--fetch-bytes n` adds each set-up
 * with the consumer's `maxBytesPerPartition` set to n (1048576: the clients' own default, which they
 * fetched before the receiver sized fetches itself).
 */

const MESSAGES = 1_000_000;
const KEYS = 1_000;
const PARTITIONS = 12;
const WINDOW = 1024;
/** A run at the clients' own 1 MiB can crawl on a loaded machine (a heap of a gigabyte and more). */
const RUN_TIMEOUT_MS = 600_000;

const SETUPS: Record<string, string> = {
  kafkajs: 'keyedDispatch on kafkajs',
  platformatic: 'keyedDispatch on @platformatic/kafka, classic protocol',
  'platformatic-consumer': 'keyedDispatch on @platformatic/kafka, consumer protocol',
};

const mb = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MB`;
const range = (xs: number[]) => {
  const [lo, hi] = minMax(xs);
  return `${mb(median(xs))} (${mb(lo)}–${mb(hi)})`;
};

function fetchBytesArg(args: string[]): number | undefined {
  const at = args.indexOf('--fetch-bytes');
  if (at < 0) return undefined;
  const bytes = Number(args[at + 1]);
  if (!Number.isInteger(bytes) || bytes <= 0)
    throw new TypeError(`--fetch-bytes: expected an integer number of bytes > 0, got '${args[at + 1]}'`);
  return bytes;
}

async function run({ rounds = 3, args }: { rounds?: number; args: string[] }): Promise<Report> {
  const fetchBytes = fetchBytesArg(args);
  const kafka = new Kafka({ clientId: 'bench', brokers: ['127.0.0.1:9092'], logLevel: logLevel.NOTHING });
  const topic = `bench-memory-${process.pid}-${Date.now().toString(36)}`;
  await produceKeyedTopic(kafka, topic, { messages: MESSAGES, keys: KEYS, partitions: PARTITIONS });
  const contenders: Record<string, { label: string; command: string[] }> = {};
  const withBytes = (id: string, bytes: number) => {
    contenders[`${id}-set`] = {
      label: `${SETUPS[id]}, \`maxBytesPerPartition\` ${bytes.toLocaleString('en-US')}`,
      command: [...childCommand(), `keyed-dispatch:${id}`, '--fetch-bytes', String(bytes)],
    };
  };
  for (const [id, label] of Object.entries(SETUPS)) {
    contenders[id] = {
      label: `${label}, no option set`,
      command: [...childCommand(), `keyed-dispatch:${id}`],
    };
    if (fetchBytes !== undefined) withBytes(id, fetchBytes);
  }
  let groups = 0;
  const runs = Object.fromEntries(
    Object.entries(contenders).map(([id, { command }]) => [
      id,
      async (): Promise<Measures> => {
        const spec = {
          topic,
          group: `bench-memory-${process.pid}-${groups++}`,
          maxInFlight: WINDOW,
          messages: MESSAGES,
          keys: KEYS,
        };
        const r = await measure(command, spec, RUN_TIMEOUT_MS);
        console.error(
          `  ${id}: ${rate(r.rate)} msgs/s, RSS ${mb(r.rss ?? 0)}, heap ${mb(r.heap ?? 0)}, ${r.violations} out of order`,
        );
        return { rate: r.rate, rss: r.rss ?? 0, heap: r.heap ?? 0, violations: r.violations };
      },
    ]),
  );
  const rs = await alternate(runs, { warmups: 0, rounds });
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.disconnect();
  const violations = Object.keys(contenders)
    .flatMap((id) => series(rs, id, 'violations'))
    .reduce((a, b) => a + b, 0);
  const figures: Record<string, string> = {};
  const rows = Object.entries(contenders).map(([id, { label }]) => {
    figures[`${id}.rss`] = mb(median(series(rs, id, 'rss')));
    figures[`${id}.heap`] = mb(median(series(rs, id, 'heap')));
    // The bounded row ÷ the one at the client's own 1 MiB: what bounding memory costs in rate.
    const other = `${id}-set`;
    const compared = other in contenders;
    if (compared) figures[`${id}.rateRatio`] = times(median(ratios(rs, id, other)));
    return [
      label,
      rate(median(series(rs, id))),
      range(series(rs, id, 'rss')),
      range(series(rs, id, 'heap')),
      compared ? ratioCell(ratios(rs, id, other)) : '',
    ];
  });
  return {
    method: `One topic of ${MESSAGES.toLocaleString('en-US')} messages (\`key:seq\`, ${KEYS.toLocaleString('en-US')} keys, ${PARTITIONS} partitions, a few bytes each) on one local broker, read from the start by keyedDispatch with a 1 ms handler and maxInFlight ${WINDOW.toLocaleString('en-US')}, each run a fresh process in a consumer group of its own. Peak RSS is the process's maximum resident set size; peak heap is the V8 heap used (garbage not yet collected included), sampled every 100 ms. ${rounds} rounds, the set-ups taking turns; medians (min–max). Order violations in all runs: ${violations}.`,
    tables: table(
      ['set-up', 'msgs/s', 'peak RSS', 'peak heap used', 'msgs/s ÷ the same set-up at 1 MiB a partition'],
      rows,
    ),
    figures,
  };
}

const scenario: Scenario = {
  title: 'Kafka consumer memory reading a backlog of 1,000,000 records',
  run,
};

export default scenario;
