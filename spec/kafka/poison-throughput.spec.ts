import { DispatchStats, keyedDispatch, retryPolicy } from 'keyed-dispatch';
import { type KafkaMessage, kafkaKey } from 'keyed-dispatch/kafka';
import { lastValueFrom } from 'rxjs';
import { ADAPTERS, type ClientAdapter } from './adapters';
import { createTopic, offsets, unique, within } from './broker';
import { useEventTopics } from './events';

jest.setTimeout(120_000);

const eventTopics = useEventTopics('poison');

/**
 * Records on the topic's one partition: enough that a cost per record growing with the records behind
 * the dead-lettered one (a scan of what the partition keeps) would take several times the control.
 */
const RECORDS = 40_000;
/** The record whose handler fails; the failure policy dead-letters it. */
const POISON = '100';
/** Rounds of a control and a poisoned run, taking turns, per client. */
const ROUNDS = 3;
/** The stretch timed: from this many records handled to `RECORDS` less it (start-up and close left out). */
const EDGE = 4_000;

let topic: string;
beforeAll(async () => {
  topic = unique('poison');
  await createTopic(eventTopics.client, topic, 1);
  for (let n = 0; n < RECORDS; n += 10_000) {
    await eventTopics.producer.send({
      topic,
      messages: Array.from({ length: 10_000 }, (_, i) => ({
        key: `k${(n + i) % 1000}`,
        value: '',
        partition: 0,
      })),
    });
  }
}, 120_000);

/** What one run took over the steady stretch (`EDGE` to `RECORDS - EDGE` handled), in ms. */
interface Stretch {
  /** Wall-clock time: waits show here (and so does whatever else the machine runs). */
  wall: number;
  /** This process's CPU time: a cost per record shows here, little of other processes' work. */
  cpu: number;
}

/**
 * One member of a new group reads the whole topic: what the steady stretch took, and whether the
 * group's committed offset reached the end once all settled (committing on demand, for as long as it
 * takes, rather than reading it at some moment).
 */
async function run(kind: ClientAdapter, poisoned: boolean): Promise<Stretch & { committedAll: boolean }> {
  const groupId = unique('group');
  const receiver = kind.receiver(groupId, [topic]);
  const stats = new DispatchStats();
  let handled = 0;
  let start = 0;
  let end = 0;
  let cpuAtStart = process.cpuUsage();
  let cpu = process.cpuUsage();
  const output = lastValueFrom(
    receiver.pipe(
      keyedDispatch<KafkaMessage, string, void>({
        key: kafkaKey,
        stats,
        failurePolicy: retryPolicy({ maxAttempts: 1, deadLetter: () => {} }),
        handle: async (m) => {
          handled++;
          if (handled === EDGE) {
            start = performance.now();
            cpuAtStart = process.cpuUsage();
          } else if (handled === RECORDS - EDGE) {
            end = performance.now();
            cpu = process.cpuUsage(cpuAtStart);
          }
          if (poisoned && m.offset === POISON) throw new Error('poison');
        },
      }),
    ),
    { defaultValue: undefined },
  );
  const all = await within(60_000, () => stats.snapshot().settled + stats.snapshot().failed === RECORDS);
  // A commit may fail now and then (the next one lands); one held at the dead-lettered record never gets there.
  const committedAll = await within(10_000, async () => {
    await receiver.commit();
    return (await offsets(eventTopics.client, groupId, topic)).committed.get(0) === String(RECORDS);
  });
  await receiver.close();
  await output;
  expect(all).toBe(true);
  return { wall: end - start, cpu: (cpu.user + cpu.system) / 1000, committedAll };
}

/** The middle one of three or more. */
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];

describe.each(ADAPTERS)('A dead-lettered record on $name with a real broker', (kind) => {
  it(`among ${RECORDS} on one partition costs no more per later record, and the committed offset moves past it`, async () => {
    const ratios: Stretch[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const runs = new Map<boolean, Stretch>();
      // Each goes first in every other round, so neither gains from the order.
      for (const poisoned of round % 2 === 0 ? [false, true] : [true, false]) {
        const { committedAll, ...stretch } = await run(kind, poisoned);
        expect(committedAll).toBe(true);
        runs.set(poisoned, stretch);
      }
      const [control, poisoned] = [runs.get(false) as Stretch, runs.get(true) as Stretch];
      ratios.push({ wall: poisoned.wall / control.wall, cpu: poisoned.cpu / control.cpu });
    }
    // A guard, not a measurement (that is bench/'s). A cost per record behind the dead-lettered one that
    // grows with the partition takes several times the control's CPU (a loop over the records since it,
    // at 1 ns a step, made it 3.6×); a wait behind it (a held partition, a backoff) several times its
    // wall-clock time. On a loaded 2-core machine single rounds reached 2.4 (CPU) and 4.0 (wall clock),
    // while the median of three stayed at 1.4 or under: it leaves out a round that other work hit.
    expect(median(ratios.map((r) => r.cpu))).toBeLessThan(2);
    expect(median(ratios.map((r) => r.wall))).toBeLessThan(3);
  });
});
