import { keyedDispatch, type TransportFault, TransportUnreachableError } from 'keyed-dispatch';
import {
  fromKafka,
  type KafkaMessage,
  type KafkaReceiverOptions,
  kafkaKey,
  keyedProducer,
} from 'keyed-dispatch/kafka';
import { lastValueFrom } from 'rxjs';
import { ADAPTERS, type ClientAdapter } from './adapters';
import {
  brokerScript,
  ensureBroker,
  groupMembers,
  kafka,
  offsets,
  QUICK_GROUP,
  unique,
  within,
} from './broker';
import { useEventTopics } from './events';

jest.setTimeout(300_000);

const eventTopics = useEventTopics('outage');

/**
 * A kafkajs member whose client is told never to restart after a crash, as it does by itself for some
 * errors an outage causes (the group's coordinator not found while the broker stops or starts): the
 * receiver runs it again, so only `maxUnreachableMs` ends its output.
 */
const kafkajsGivingUp = (groupId: string, topics: string[], options?: KafkaReceiverOptions) =>
  fromKafka({
    consumer: kafka('outage-spec').consumer({
      groupId,
      ...QUICK_GROUP,
      retry: { restartOnFailure: async () => false },
    }),
    admin: kafka('outage-spec').admin(),
    topics,
    fromBeginning: true,
    ...options,
  });

/** The longest session timeout of the set-ups: the broker's for the consumer protocol (scripts/brokers/kafka.sh). */
const SESSION_TIMEOUT_MS = 10_000;

// Whatever happens in a test, the next one (and the next spec file) finds the broker up.
afterAll(() => ensureBroker(), 240_000);

/** A member of its own group that records what it handles, the faults it is told and how its output ended. */
function member(
  kind: ClientAdapter,
  topic: string,
  maxUnreachableMs: number,
  receiverOf: typeof kind.receiver = kind.receiver,
) {
  const groupId = unique('group');
  const faults: TransportFault[] = [];
  const handled = new Set<string>();
  const receiver = receiverOf(groupId, [topic], {
    maxUnreachableMs,
    onTransportError: (fault) => faults.push(fault),
  });
  let error: unknown;
  let ended = false;
  const output = lastValueFrom(
    receiver.pipe(
      keyedDispatch<KafkaMessage, string, void>({
        key: kafkaKey,
        handle: async (m) => {
          handled.add(`${m.partition}:${m.offset}`);
        },
      }),
    ),
    { defaultValue: undefined },
  ).then(
    () => {
      ended = true;
    },
    (err: unknown) => {
      ended = true;
      error = err;
    },
  );
  return {
    groupId,
    faults,
    handled,
    receiver,
    output,
    get ended() {
      return ended;
    },
    get error() {
      return error;
    },
  };
}

/** The members of one set-up: each in a group of its own, on the same topic. */
function membersOf(kind: ClientAdapter, topic: string) {
  const impatient = member(kind, topic, 3_000);
  const patients = [member(kind, topic, 600_000)];
  if (kind.name === 'kafkajs') patients.push(member(kind, topic, 600_000, kafkajsGivingUp));
  const leaving = member(kind, topic, 600_000);
  return { name: kind.name, impatient, patients, leaving, all: [impatient, leaving, ...patients] };
}

// The set-ups share one outage: each stop and start of the broker takes seconds, and the members
// recover from the same one as a group each would alone. Every check names its set-up.
describe('Kafka while the broker is down, on every client set-up at once', () => {
  it('tells onTransportError each fault, errors the output once maxUnreachableMs has passed, and with a longer one recovers when the broker is back, losing nothing; a member closed as the broker comes back still closes', async () => {
    const topic = await eventTopics.topicWith(2, 100, 10);
    const setUps = ADAPTERS.map((kind) => membersOf(kind, topic));
    const all = setUps.flatMap((s) => s.all);
    const patients = setUps.flatMap((s) => s.patients.map((p) => ({ name: s.name, p })));
    const ended = (list: Array<{ name: string; p: ReturnType<typeof member> }>) =>
      list.map(({ name, p }) => [name, p.ended, p.error]);
    try {
      const allHandled = () => all.every((m) => m.handled.size === 100);
      expect(await within(30_000, allHandled)).toBe(true);
      await brokerScript('stop');
      try {
        expect(await within(90_000, () => setUps.every((s) => s.impatient.ended))).toBe(true);
        for (const s of setUps) {
          expect([s.name, s.impatient.error]).toEqual([s.name, expect.any(TransportUnreachableError)]);
          expect([s.name, s.impatient.faults.length > 0]).toEqual([s.name, true]);
        }
        expect(await within(30_000, () => patients.every(({ p }) => p.faults.length > 0))).toBe(true);
        expect(ended(patients)).toEqual(patients.map(({ name }) => [name, false, undefined]));
      } finally {
        await brokerScript('start');
      }
      // Closed at once, while the broker may still be loading its groups and refuse to let it leave: the
      // receiver's close resolves all the same, and its output completes.
      await Promise.all(setUps.map((s) => s.leaving.receiver.close()));
      await Promise.all(setUps.map((s) => s.leaving.output));
      const leavers = setUps.map((s) => ({ name: s.name, p: s.leaving }));
      expect(ended(leavers)).toEqual(leavers.map(({ name }) => [name, true, undefined]));
      for (const fault of all.flatMap((m) => m.faults)) {
        expect(['fetch', 'commit', 'heartbeat', 'connection']).toContain(fault.operation);
        expect(fault.receiver).toMatch(/^from(Platformatic|Confluent)?Kafka\(\)$/);
      }

      // Back: what is produced now is handled too, and the group's commits reach the end — also once
      // a session timeout has passed, so the member is in its group again, not only fetching.
      const send = keyedProducer<{ key: string; seq: number }>(eventTopics.producer, {
        topic,
        key: (e) => e.key,
      });
      for (const batch of [1, 2]) {
        if (batch === 2) await new Promise((resolve) => setTimeout(resolve, SESSION_TIMEOUT_MS + 2_000));
        await send.send(
          Array.from({ length: 100 }, (_, n) => ({
            key: `k${n % 10}`,
            seq: 10 * batch + Math.floor(n / 10),
          })),
        );
        const size = 100 * (batch + 1);
        await within(120_000, () => patients.every(({ p }) => p.handled.size === size));
        expect(patients.map(({ name, p }) => [name, p.handled.size])).toEqual(
          patients.map(({ name }) => [name, size]),
        );
        const unfinished: string[] = [];
        for (const { name, p } of patients) {
          const reachedEnd = await within(30_000, async () => {
            const { committed, end } = await offsets(eventTopics.client, p.groupId, topic);
            return [...end].every(([partition, offset]) => committed.get(partition) === offset);
          });
          if (!reachedEnd) unfinished.push(name);
        }
        expect(unfinished).toEqual([]);
      }
      expect(ended(patients)).toEqual(patients.map(({ name }) => [name, false, undefined]));
      // Seconds after the leavers closed, a restart their client had under way when they did has not
      // brought any of them back into its group.
      const members = await Promise.all(
        setUps.map(async (s) => [s.name, await groupMembers(eventTopics.client, s.leaving.groupId)]),
      );
      expect(members).toEqual(setUps.map((s) => [s.name, 0]));
    } finally {
      await Promise.all(all.map((m) => m.receiver.close()));
      await Promise.all(all.map((m) => m.output));
    }
  });
});
