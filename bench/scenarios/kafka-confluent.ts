import { alternate, type Rounds, ratios, series } from '../harness';
import type { Report, Scenario } from '../report';
import { median, rate, ratioCell, table, times } from '../stats';
import { KEYS, keyedTopic, MESSAGES, PARTITIONS } from './kafka';
import { childCommand, childRuns } from './kafka-runs';

/**
 * The Confluent contenders of the `kafka` scenario alone: keyedDispatch on @confluentinc/kafka-javascript
 * against the floor written by hand on the same client, at both bounds, with one warm-up pass instead of
 * two. The whole `kafka` scenario takes most of an hour on two cores; this takes minutes.
 */

const BOUNDS = [256, 1024];
const WARM_UPS = 1;

async function run({ rounds = 3 }: { rounds?: number }): Promise<Report> {
  const { topic, remove } = await keyedTopic('bench-confluent');
  const child = childCommand();
  const commands: Record<string, { label: string; command: string[]; bound: number }> = {};
  for (const bound of BOUNDS) {
    commands[`confluent-${bound}`] = {
      label: `keyedDispatch on @confluentinc/kafka-javascript, maxInFlight ${bound}`,
      command: [...child, 'keyed-dispatch:confluent'],
      bound,
    };
    commands[`floor-confluent-${bound}`] = {
      label: `the floor: its native \`consume\` and a per-key promise chain by hand, ${bound} in flight`,
      command: [...child, 'floor:confluent'],
      bound,
    };
  }
  const { runs, violations } = childRuns(commands, {
    topic,
    group: `bench-confluent-${process.pid}`,
    messages: MESSAGES,
    keys: KEYS,
    warmUps: WARM_UPS,
  });
  const rs: Rounds = await alternate(runs, { warmups: 0, rounds });
  await remove();
  const figures: Record<string, string> = {};
  const rows = Object.entries(commands).map(([id, c]) => [c.label, rate(median(series(rs, id)))]);
  const floors = BOUNDS.map((b) => {
    const oursOfFloor = ratios(rs, `confluent-${b}`, `floor-confluent-${b}`);
    figures[`confluent-${b}.floor`] = times(median(oursOfFloor));
    return `maxInFlight ${b}: ${ratioCell(oursOfFloor)}`;
  });
  return {
    method: `The \`kafka\` scenario's topic (${MESSAGES.toLocaleString('en-US')} messages, ${KEYS.toLocaleString('en-US')} keys, ${PARTITIONS} partitions) and its 1 ms handler; each run a fresh process that reads the topic ${WARM_UPS} time unmeasured, then once measured in a fresh group (the consumer group protocol, KIP-848). ${rounds} rounds, the order rotated; ratios are medians of per-round ratios (min–max). Per-key order checked; violations in all runs: ${violations()}.`,
    tables: [
      table(['contender', 'msgs/s'], rows),
      `keyedDispatch on @confluentinc/kafka-javascript ÷ the floor on the same client, per round: ${floors.join('; ')}.`,
    ].join('\n\n'),
    figures,
  };
}

const scenario: Scenario = {
  title: 'Kafka on @confluentinc/kafka-javascript: keyedDispatch against the floor by hand',
  run,
};

export default scenario;
