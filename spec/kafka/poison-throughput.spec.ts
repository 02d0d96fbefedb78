import { DispatchStats, keyedDispatch, retryPolicy } from 'keyed-dispatch';
import { type KafkaMessage, kafkaKey } from 'keyed-dispatch/kafka';
import { lastValueFrom } from 'rxjs';
import { ADAPTERS, type ClientAdapter } from './adapters';
import { createTopic, offsets, unique, within } from './broker';
import { useEventTopics } from './events';

jest.setTimeout(300_000);

const eventTopics = useEventTopics('poison');

/** Records on the topic's one partition. */
const RECORDS = 200_000;
/** The record whose handler fails; the failure policy dead-letters it. */
const POISON = '100';
/** Control and poisoned runs, taking turns, per client. */
const ROUNDS = 5;
/** The stretch timed: from this many records handled to `RECORDS` less it (start-up and close left out). */
const EDGE = 10_000;

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

/**
 * One member of a new group reads the whole topic; how long it took over the steady stretch (`EDGE` to
 * `RECORDS - EDGE` handled), in ms, and the group's committed offset once all settled (before the
 * member closes).
 */
async function run(kind: ClientAdapter, poisoned: boolean): Promise<{ ms: number; committed: number }> {
  const groupId = unique('group');
  const receiver = kind.receiver(groupId, [topic]);
  const stats = new DispatchStats();
  let handled = 0;
  let start = 0;
  let end = 0;
  const output = lastValueFrom(
    receiver.pipe(
      keyedDispatch<KafkaMessage, string, void>({
        key: kafkaKey,
        stats,
        failurePolicy: retryPolicy({ maxAttempts: 1, deadLetter: () => {} }),
        handle: async (m) => {
          handled++;
          if (handled === EDGE) start = performance.now();
          else if (handled === RECORDS - EDGE) end = performance.now();
          if (poisoned && m.offset === POISON) throw new Error('poison');
        },
      }),
    ),
    { defaultValue: undefined },
  );
  const all = await within(120_000, () => stats.snapshot().settled + stats.snapshot().failed === RECORDS);
  const ms = end - start;
  // Commits follow the count (every 200 finished): by now one has landed near the end.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const committed = Number((await offsets(eventTopics.client, groupId, topic)).committed.get(0));
  await receiver.close();
  await output;
  expect(all).toBe(true);
  return { ms, committed };
}

describe.each(ADAPTERS)('A dead-lettered record on $name with a real broker', (kind) => {
  it(`among ${RECORDS} on one partition costs no more per later record, and the committed offset moves past it`, async () => {
    const control: number[] = [];
    const poisoned: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Each goes first in every other round, so neither gains from the order.
      for (const poison of round % 2 === 0 ? [false, true] : [true, false]) {
        const { ms, committed } = await run(kind, poison);
        if (!poison) control.push(ms);
        else {
          poisoned.push(ms);
          expect(committed).toBeGreaterThan(RECORDS - 2_000);
        }
      }
    }
    // The best of each: the runs least disturbed by whatever else the machine runs. A guard, not a
    // measurement (that is bench/'s): a cost per record behind the dead-lettered one grows with the
    // partition and takes several times the control, while one broker's run-to-run spread on a loaded
    // machine stays well under twice it.
    expect(Math.min(...poisoned)).toBeLessThan(2 * Math.min(...control));
  });
});
