import { join } from 'node:path';
import { alternate, CELL_DIR, type Run, series } from '../harness';
import type { Report, Scenario } from '../report';
import { median, percent, table } from '../stats';
import { KEYS, keyedTopic, MESSAGES, PARTITIONS } from './kafka';
import { parallelConsumerCommand } from './kafka-pc';
import { childCommand, killAndRestart } from './kafka-runs';

/**
 * Redelivery after a crash: a consumer SIGKILLed halfway through the topic and started again in the same
 * group. What it handles twice is what finished after the last commit; nothing may be lost or reordered.
 */

const KILL_POINT = 50_000;
const WINDOW = 256;

const LABELS: Record<string, string> = {
  defaults: 'keyedDispatch on kafkajs, default commits (every 200 messages or 1 s)',
  everySecond: 'keyedDispatch on kafkajs, commits every 1 s only',
  pc: 'Parallel Consumer 0.5.3.2, KEY order, commits every 1 s',
};

async function run({ rounds = 2 }: { rounds?: number }): Promise<Report> {
  const { topic, remove } = await keyedTopic('redelivery');
  const child = childCommand();
  const commands: Record<string, string[]> = {
    defaults: [...child, 'keyed-dispatch:kafkajs'],
    everySecond: [...child, 'keyed-dispatch:kafkajs', '--commit-every-messages', String(2 ** 30)],
    pc: parallelConsumerCommand(),
  };
  let groups = 0;
  const runs: Record<string, Run> = Object.fromEntries(
    Object.entries(commands).map(([id, command]) => [
      id,
      async () => {
        const spec = {
          topic,
          group: `redelivery-${process.pid}-${groups++}`,
          maxInFlight: WINDOW,
          messages: MESSAGES,
          keys: KEYS,
        };
        const k = await killAndRestart(command, spec, KILL_POINT, join(CELL_DIR, 'kafka-handled.log'));
        console.error(`  ${id}: ${k.duplicates} handled twice, ${k.lost} lost, ${k.violations} out of order`);
        return {
          twice: k.duplicates / MESSAGES,
          lost: k.lost,
          violations: k.violations,
          stalled: +k.stalled,
        };
      },
    ]),
  );
  const rs = await alternate(runs, { warmups: 0, rounds });
  await remove();
  const sum = (id: string, measure: string) => series(rs, id, measure).reduce((a, b) => a + b, 0);
  const rows = Object.entries(LABELS).map(([id, label]) => [
    label,
    series(rs, id, 'twice').map(percent).join(', '),
    String(sum(id, 'lost')),
    String(sum(id, 'violations')),
    `${sum(id, 'stalled')} of ${rounds}`,
  ]);
  const twice = (id: string) => percent(median(series(rs, id, 'twice')));
  return {
    method: `One topic of ${MESSAGES.toLocaleString('en-US')} messages over ${KEYS.toLocaleString('en-US')} keys on ${PARTITIONS} partitions; a 1 ms handler, ${WINDOW} in flight. Each run starts a consumer in a fresh group, SIGKILLs it once it has handled ${KILL_POINT.toLocaleString('en-US')} messages, and starts another in the same group that finishes the topic. Every handled message is appended to a file unbuffered (so the kill loses none): handled twice = lines − distinct lines, lost = messages never handled. A restarted consumer that handles nothing for 30 s counts as stalled. ${rounds} runs per contender, taking turns.`,
    tables: table(['contender', 'handled twice, each run', 'lost', 'order violations', 'stalled'], rows),
    figures: { defaults: twice('defaults'), everySecond: twice('everySecond'), pc: twice('pc') },
    chart: {
      title: 'Messages handled twice after a SIGKILL (median % of the topic)',
      categories: ['default commits', 'commits every 1 s', 'Parallel Consumer'],
      series: [
        {
          name: 'handled twice',
          values: Object.keys(LABELS).map((id) => 100 * median(series(rs, id, 'twice'))),
        },
      ],
      yLabel: '% of messages',
    },
    headline: [
      [
        'Kafka consumer killed halfway and restarted: messages handled twice',
        '**{defaults}** of the topic (committing every 1 s only: {everySecond})',
        '**{pc}** with Confluent Parallel Consumer',
      ],
    ],
  };
}

const scenario: Scenario = {
  title: 'Kafka messages handled twice after a consumer is killed and restarted',
  run,
};

export default scenario;
