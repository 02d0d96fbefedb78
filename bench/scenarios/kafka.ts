import { Kafka, logLevel } from 'kafkajs';
import { alternate, type Rounds, ratios, series } from '../harness';
import { produceKeyedTopic } from '../kafka-topic';
import type { Report, Scenario } from '../report';
import { median, rate, ratioCell, table, times } from '../stats';
import { parallelConsumerCommand } from './kafka-pc';
import { childCommand, childRuns } from './kafka-runs';

/**
 * Kafka throughput with a 1 ms handler: keyedDispatch over kafkajs, @platformatic/kafka and
 * @confluentinc/kafka-javascript against what
 * users write instead (kafkajs `eachMessage`, one message at a time per partition) and the strongest
 * peer (Confluent Parallel Consumer, Java, KEY order), at the same in-flight bound.
 */

export const MESSAGES = 100_000;
export const KEYS = 1_000;
export const PARTITIONS = 12;
const BOUNDS = [256, 1024];
/** A handler that mostly waits (a remote call): throughput follows the handlers running at once. */
const SLOW_HANDLER_MS = 10;
const SLOW_BOUND = 1024;
const CLIENTS: Record<string, string> = { kafkajs: 'kafkajs', platformatic: '@platformatic/kafka' };
/**
 * Unmeasured passes over the topic each process makes before its measured one: every contender gets the
 * same, so each is measured warm. A JVM runs its first pass mostly interpreted, and Parallel Consumer
 * still ran faster after a second one.
 */
export const WARM_UPS = 2;

/** A contender: a process per run, with its in-flight bound. */
interface Contender {
  label: string;
  command: string[];
  bound: number;
  /** The handler waits this long instead of 1 ms. */
  handlerMs?: number;
}

function contenders(): Record<string, Contender> {
  const pc = parallelConsumerCommand();
  const child = childCommand();
  const all: Record<string, Contender> = {};
  for (const bound of BOUNDS) {
    all[`pc-${bound}`] = {
      label: `Parallel Consumer 0.5.3.2, KEY order, maxConcurrency ${bound}`,
      command: pc,
      bound,
    };
    for (const [id, client] of Object.entries(CLIENTS)) {
      all[`${id}-${bound}`] = {
        label: `keyedDispatch on ${client}, maxInFlight ${bound}`,
        command: [...child, `keyed-dispatch:${id}`],
        bound,
      };
    }
    all[`floor-${bound}`] = {
      label: `the floor: kafkajs \`eachBatch\` and a per-key promise chain by hand, ${bound} in flight`,
      command: [...child, 'floor:kafkajs'],
      bound,
    };
    all[`confluent-${bound}`] = {
      label: `keyedDispatch on @confluentinc/kafka-javascript, maxInFlight ${bound}`,
      command: [...child, 'keyed-dispatch:confluent'],
      bound,
    };
    all[`floor-confluent-${bound}`] = {
      label: `the floor on @confluentinc/kafka-javascript: its native \`consume\` and a per-key promise chain by hand, ${bound} in flight`,
      command: [...child, 'floor:confluent'],
      bound,
    };
    all[`dispatch-${bound}`] = {
      label: `keyedDispatch with the 1 ms handler, maxInFlight ${bound}, no Kafka (the topic's messages from an array)`,
      command: [...child, 'dispatch-only'],
      bound,
    };
    all[`alone-${bound}`] = {
      label: `the 1 ms handler alone, ${bound} at once, no Kafka (Node's ceiling for it)`,
      command: [...child, 'handler-only'],
      bound,
    };
  }
  for (const [id, contender, name] of [
    ['kafkajs', 'keyed-dispatch:kafkajs', 'keyedDispatch on kafkajs'],
    ['floor', 'floor:kafkajs', 'the floor by hand on kafkajs'],
  ]) {
    all[`${id}-${SLOW_BOUND}-${SLOW_HANDLER_MS}ms`] = {
      label: `${name}, ${SLOW_BOUND} in flight, a ${SLOW_HANDLER_MS} ms handler`,
      command: [...child, contender, '--handler-ms', String(SLOW_HANDLER_MS)],
      bound: SLOW_BOUND,
      handlerMs: SLOW_HANDLER_MS,
    };
  }
  all.eachMessage = {
    label: `kafkajs \`eachMessage\`, partitionsConsumedConcurrently ${PARTITIONS}`,
    command: [...child, 'each-message:kafkajs'],
    bound: 0,
  };
  for (const [id, client] of Object.entries(CLIENTS)) {
    all[`raw-${id}`] = {
      label: `${client} fetch + commit, no handler`,
      command: [...child, `raw:${id}`],
      bound: 0,
    };
  }
  return all;
}

/** A fresh topic of `key:seq` messages, and a way to delete it. */
export async function keyedTopic(name: string): Promise<{ topic: string; remove(): Promise<void> }> {
  const kafka = new Kafka({ clientId: 'bench', brokers: ['127.0.0.1:9092'], logLevel: logLevel.NOTHING });
  const topic = `${name}-${process.pid}-${Date.now().toString(36)}`;
  await produceKeyedTopic(kafka, topic, { messages: MESSAGES, keys: KEYS, partitions: PARTITIONS });
  return {
    topic,
    async remove() {
      const admin = kafka.admin();
      await admin.connect();
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
    },
  };
}

async function run({ rounds = 3 }: { rounds?: number }): Promise<Report> {
  const { topic, remove } = await keyedTopic('bench');
  const all = contenders();
  const { runs, violations } = childRuns(all, {
    topic,
    group: `bench-${process.pid}`,
    messages: MESSAGES,
    keys: KEYS,
    warmUps: WARM_UPS,
  });
  const rs: Rounds = await alternate(runs, { warmups: 0, rounds });
  await remove();
  const figures: Record<string, string> = {};
  const rows = Object.entries(all).map(([id, c]) => {
    const ours = (id.startsWith('kafkajs') || id.startsWith('platformatic')) && c.handlerMs === undefined;
    if (ours) {
      figures[`${id}.pc`] = times(median(ratios(rs, id, `pc-${c.bound}`)));
      figures[`${id}.eachMessage`] = times(median(ratios(rs, id, 'eachMessage')));
    }
    const rss = series(rs, id, 'rss').filter((x) => x !== undefined);
    return [
      c.label,
      rate(median(series(rs, id))),
      rss.length === 0 ? '' : `${Math.round(median(rss) / 2 ** 20)} MB`,
      ours ? ratioCell(ratios(rs, id, `pc-${c.bound}`)) : '',
      ours ? ratioCell(ratios(rs, id, 'eachMessage')) : '',
    ];
  });
  // What one thread could do if fetching and the handler only added up: 1/(1/raw + 1/handler alone).
  const bounds: string[] = [];
  for (const [id, client] of Object.entries(CLIENTS)) {
    for (const b of BOUNDS) {
      const raw = series(rs, `raw-${id}`);
      const alone = series(rs, `alone-${b}`);
      const ofBound = series(rs, `${id}-${b}`).map((r, i) => r * (1 / raw[i] + 1 / alone[i]));
      figures[`${id}-${b}.bound`] = times(median(ofBound));
      bounds.push(`keyedDispatch on ${client}, maxInFlight ${b}: ${ratioCell(ofBound)}`);
    }
  }
  // The least code doing the same job on kafkajs, against the same bound and against keyedDispatch.
  const floors: string[] = [];
  const confluentFloors: string[] = [];
  const alones: string[] = [];
  for (const b of BOUNDS) {
    const raw = series(rs, 'raw-kafkajs');
    const alone = series(rs, `alone-${b}`);
    const floorOfBound = series(rs, `floor-${b}`).map((r, i) => r * (1 / raw[i] + 1 / alone[i]));
    const oursOfFloor = ratios(rs, `kafkajs-${b}`, `floor-${b}`);
    figures[`floor-${b}.bound`] = times(median(floorOfBound));
    figures[`kafkajs-${b}.floor`] = times(median(oursOfFloor));
    bounds.push(`the floor on kafkajs, ${b} in flight: ${ratioCell(floorOfBound)}`);
    alones.push(`maxInFlight ${b}: ${ratioCell(ratios(rs, `dispatch-${b}`, `alone-${b}`))}`);
    floors.push(`maxInFlight ${b}: ${ratioCell(oursOfFloor)}`);
    const confluentOfFloor = ratios(rs, `confluent-${b}`, `floor-confluent-${b}`);
    figures[`confluent-${b}.floor`] = times(median(confluentOfFloor));
    confluentFloors.push(`maxInFlight ${b}: ${ratioCell(confluentOfFloor)}`);
  }
  const med = (id: string) => median(series(rs, id));
  const runningOf = (id: string) => Math.round(median(series(rs, id, 'running'))).toLocaleString('en-US');
  // How many handlers the bound leaves running: messages waiting behind their key count in it.
  const running = BOUNDS.map((b) => {
    const counted: [string, string][] = [
      [`alone-${b}`, 'the handler alone'],
      [`dispatch-${b}`, 'keyedDispatch with no Kafka'],
      ...Object.entries(CLIENTS).map(([id, client]): [string, string] => [
        `${id}-${b}`,
        `keyedDispatch on ${client}`,
      ]),
      [`floor-${b}`, 'the floor'],
    ];
    const cells = counted.map(([id, name]) => {
      figures[`${id}.running`] = runningOf(id);
      return `${name} ${figures[`${id}.running`]}`;
    });
    return `maxInFlight ${b}: ${cells.join(', ')}`;
  });
  // How much the warm-up is worth to each: the cold first pass ÷ the measured one, per run.
  const colds = [
    `pc-${BOUNDS[0]}`,
    `pc-${BOUNDS[1]}`,
    ...Object.keys(CLIENTS).map((id) => `${id}-${BOUNDS[1]}`),
  ].map((id) => {
    figures[`${id}.cold`] = times(median(series(rs, id, 'cold')));
    return `${all[id].label}: ${ratioCell(series(rs, id, 'cold'))}`;
  });
  const slow = `${SLOW_BOUND}-${SLOW_HANDLER_MS}ms`;
  const slowOfFloor = ratios(rs, `kafkajs-${slow}`, `floor-${slow}`);
  figures[`kafkajs-${slow}.floor`] = times(median(slowOfFloor));
  return {
    method: `One topic of ${MESSAGES.toLocaleString('en-US')} messages (\`key:seq\`, ${KEYS.toLocaleString('en-US')} keys, in order per key, ${PARTITIONS} partitions) on one local broker. Every run is a fresh process (a JVM for Parallel Consumer) that reads the whole topic from the start ${WARM_UPS} times unmeasured (a warm-up, in a consumer group of its own, stopped before the next pass) and then once more, measured, in a fresh group; its rate runs from its first handled message to its last, so start-up and the group join do not count. ${rounds} rounds, every contender once a round, the order rotated; ratios are medians of per-round ratios (min–max). Handlers: keyedDispatch and \`eachMessage\` \`await\` a \`setTimeout(1)\` (\`setTimeout(${SLOW_HANDLER_MS})\` where a row says so); Parallel Consumer \`Thread.sleep(1)\` on its pool of \`maxConcurrency\` threads (KEY order, commits every 1 s). Every contender parses each message and checks per-key order; violations in all runs: ${violations()}. Peak RSS: the Node process's maximum resident set size (its warm-up passes included), median over rounds (\`npm run bench -- kafka-memory\` measures it on a 1,000,000-record backlog). The handler alone (no Kafka) and the raw clients (fetch and commit, no handler) are the ceilings a pipeline on one Node thread works under.`,
    tables: [
      table(
        [
          'contender',
          'msgs/s',
          'peak RSS',
          'keyedDispatch ÷ Parallel Consumer',
          'keyedDispatch ÷ `eachMessage`',
        ],
        rows,
      ),
      `Each ÷ the sum-of-parts bound \`1/(1/raw + 1/handler alone)\`, per round (the raw client and the handler alone at the same bound): ${bounds.join('; ')}.`,
      `keyedDispatch on kafkajs ÷ the floor on kafkajs, per round: ${floors.join('; ')}. The floor is the least code that does the same job by hand: a per-key promise chain, at most the bound in flight across partitions (a batch waits for room), and a partition's offset committed once a batch is handled. It shows how far under the bound a pipeline on this client and handler stays when it does nothing else.`,
      `keyedDispatch on @confluentinc/kafka-javascript ÷ the floor written the same way on that client (its native \`consume\` loop), per round: ${confluentFloors.join('; ')}.`,
      `keyedDispatch with no Kafka ÷ the handler alone, per round: ${alones.join('; ')}. The handler alone runs its \`maxInFlight\` timers in step, mostly waiting, with no key order to keep: its \`1/rate\` is not a cost per message that adds to the client's. A keyed pipeline with nothing else on its thread already stays this far under it.`,
      `Handlers running at once (the mean seen as each handler starts, median over rounds): ${running.join('; ')}. The in-flight bound counts a message from its delivery to its end, running or waiting behind its key; the handler alone keeps no key order and runs all of its bound. From an array the keys take turns exactly, so about one message a key is in flight. From Kafka a partition's keys take turns within it, and a partition given more of the window than it has keys has messages waiting behind them. The floor gives each freed place to the partitions' waiting batches in turn, one message each, so each partition gets as many messages as the one with the fewest keys can finish; keyedDispatch serves the partition with the fewest messages in flight first, so each has about an equal share. With about as many running, keyedDispatch with no Kafka still stays under the handler alone: on one thread the 1 ms timers fire later the more work each message brings.`,
      `A process's first, cold pass ÷ its measured pass, per run: ${colds.join('; ')}. Before the warm-ups, each run was this first pass.`,
      `With a ${SLOW_HANDLER_MS} ms handler, ${SLOW_BOUND} in flight, the thread mostly waits and throughput follows the handlers running at once: keyedDispatch on kafkajs ÷ the floor, per round, ${ratioCell(slowOfFloor)}; handlers running at once, keyedDispatch ${runningOf(`kafkajs-${slow}`)}, the floor ${runningOf(`floor-${slow}`)}.`,
    ].join('\n\n'),
    figures,
    chart: {
      title: `Kafka, ${PARTITIONS} partitions, 1 ms handler (median msgs/s)`,
      categories: BOUNDS.map((b) => `in-flight bound ${b}`),
      series: [
        { name: 'Parallel Consumer', values: BOUNDS.map((b) => med(`pc-${b}`)) },
        ...Object.entries(CLIENTS).map(([id, client]) => ({
          name: `keyedDispatch on ${client}`,
          values: BOUNDS.map((b) => med(`${id}-${b}`)),
        })),
        { name: 'the floor on kafkajs, by hand', values: BOUNDS.map((b) => med(`floor-${b}`)) },
        { name: 'kafkajs eachMessage', values: BOUNDS.map(() => med('eachMessage')) },
        { name: '1 ms handler alone, no Kafka', values: BOUNDS.map((b) => med(`alone-${b}`)) },
      ],
      yLabel: 'messages / s',
    },
    headline: BOUNDS.map((b) => [
      `Kafka, 1 ms handler, ${b.toLocaleString('en-US')} in flight: throughput`,
      `**{kafkajs-${b}.eachMessage}** kafkajs \`eachMessage\` (12 partitions at once)`,
      `**{kafkajs-${b}.pc}** Confluent Parallel Consumer (Java)`,
    ]),
  };
}

const scenario: Scenario = {
  title: 'Kafka with a 1 ms handler against kafkajs eachMessage and Confluent Parallel Consumer',
  run,
};

export default scenario;
