import { keyedDispatch, MessageError, retryPolicy } from 'keyed-dispatch';
import { type KafkaMessage, type KafkaReceiverOptions, kafkaKey } from 'keyed-dispatch/kafka';
import { lastValueFrom } from 'rxjs';
import { ADAPTERS, type ClientAdapter } from './adapters';
import { createTopic, offsets, unique, within } from './broker';
import { useEventTopics } from './events';
import { observedReceiver } from './observed-adapter';

jest.setTimeout(90_000);

const eventTopics = useEventTopics('bad-messages');

/** Offset of the record without a key in `topicWithKeyless`'s partition. */
const KEYLESS = 5;
/** Records in it. */
const RECORDS = 20;

/** A one-partition topic of `RECORDS` records keyed k0…k4 in turn, but for the one at `KEYLESS`, which has no key. */
async function topicWithKeyless(): Promise<string> {
  const topic = unique('keyless');
  await createTopic(eventTopics.client, topic, 1);
  await eventTopics.producer.send({
    topic,
    messages: Array.from({ length: RECORDS }, (_, n) => ({
      key: n === KEYLESS ? null : `k${n % 5}`,
      value: String(n),
      partition: 0,
    })),
  });
  return topic;
}

/** Runs a member of `groupId` whose key selector is `kafkaKey` until its output ends; the offsets it handled, and its error. */
async function runUntilError(
  kind: ClientAdapter,
  groupId: string,
  topic: string,
  options: KafkaReceiverOptions,
): Promise<{ handled: number[]; error: unknown }> {
  const receiver = kind.receiver(groupId, [topic], options);
  const handled: number[] = [];
  const output = lastValueFrom(
    receiver.pipe(
      keyedDispatch<KafkaMessage, string, void>({
        key: kafkaKey,
        handle: async (m) => {
          handled.push(Number(m.offset));
        },
        failurePolicy: 'error',
      }),
    ),
    { defaultValue: undefined },
  );
  const error = await errorWithin(output, 20_000);
  // After an error this waits for the session's last commit and its leaving.
  await receiver.close();
  return { handled, error };
}

/** What `output` rejects with within `ms`; undefined if it resolves or is still pending then. */
async function errorWithin(output: Promise<unknown>, ms: number): Promise<unknown> {
  let error: unknown;
  let ended = false;
  output.then(
    () => {
      ended = true;
    },
    (err: unknown) => {
      ended = true;
      error = err;
    },
  );
  await within(ms, () => ended);
  return error;
}

/**
 * Runs a member of `groupId` that takes a keyless record too, until it has handled `expected` (or 20 s
 * passed), then closes it; the offsets it handled.
 */
async function runAgain(kind: ClientAdapter, groupId: string, topic: string, expected: number[]) {
  const receiver = kind.receiver(groupId, [topic]);
  const handled: number[] = [];
  const output = lastValueFrom(
    receiver.pipe(
      keyedDispatch<KafkaMessage, string, void>({
        key: (m) => m.key?.toString() ?? 'keyless',
        handle: async (m) => {
          handled.push(Number(m.offset));
        },
      }),
    ),
    { defaultValue: undefined },
  );
  await within(20_000, () => expected.every((offset) => handled.includes(offset)));
  await receiver.close();
  await output;
  return handled;
}

describe.each(ADAPTERS)('Kafka bad messages on $name with a real broker', (kind) => {
  it.each(['redeliver', 'ack'] as const)(
    "a record without a key and failurePolicy 'error' (onFailed '%s') errors the output with a MessageError naming its topic, partition and offset, and is delivered again after a restart with everything after it that had not finished",
    async (onFailed) => {
      const topic = await topicWithKeyless();
      const groupId = unique('group');
      const first = await runUntilError(kind, groupId, topic, { onFailed });
      expect(first.error).toBeInstanceOf(MessageError);
      expect((first.error as MessageError).source).toBe(`topic '${topic}' partition 0 offset ${KEYLESS}`);
      expect((first.error as MessageError).message).toContain(
        `topic '${topic}' partition 0 offset ${KEYLESS}`,
      );
      expect(first.handled.every((offset) => offset < KEYLESS)).toBe(true);
      const committed = Number((await offsets(eventTopics.client, groupId, topic)).committed.get(0));
      expect(committed).toBeLessThanOrEqual(KEYLESS);

      const unfinished = Array.from({ length: RECORDS }, (_, n) => n).filter(
        (n) => n >= KEYLESS && !first.handled.includes(n),
      );
      const second = await runAgain(kind, groupId, topic, unfinished);
      expect(second).toContain(KEYLESS);
      expect(unfinished.filter((n) => !second.includes(n))).toEqual([]);
    },
  );

  it('a record without a key goes to the dead letter of a retry policy, is committed, and is not delivered again after a restart', async () => {
    const topic = await topicWithKeyless();
    const groupId = unique('group');
    const dead: Array<{ offset: string; key: unknown; error: unknown }> = [];
    const handled: number[] = [];
    const outcomes: string[] = [];
    const first = observedReceiver(kind, groupId, [topic], {
      onSettled: (m, outcome) => outcomes.push(`${m.offset}:${outcome}`),
    });
    const output = lastValueFrom(
      first.receiver.pipe(
        keyedDispatch<KafkaMessage, string, void>({
          key: kafkaKey,
          failurePolicy: retryPolicy({
            maxAttempts: 3,
            deadLetter: (m, error, context) => {
              dead.push({ offset: m.offset, key: context.key, error });
            },
          }),
          handle: async (m) => {
            handled.push(Number(m.offset));
          },
        }),
      ),
      { defaultValue: undefined },
    );
    await within(20_000, () => outcomes.length === RECORDS);
    await first.receiver.close();
    await output;
    expect(dead).toEqual([{ offset: String(KEYLESS), key: undefined, error: expect.any(TypeError) }]);
    expect(outcomes).toContain(`${KEYLESS}:dead-lettered`);
    expect(handled).not.toContain(KEYLESS);
    const { committed, end } = await offsets(eventTopics.client, groupId, topic);
    expect(committed).toEqual(end);

    // A new member starts after it: a record produced now is the first it gets.
    const { adapter, receiver } = observedReceiver(kind, groupId, [topic]);
    const again: number[] = [];
    const secondOutput = lastValueFrom(
      receiver.pipe(
        keyedDispatch<KafkaMessage, string, void>({
          key: (m) => m.key?.toString() ?? 'keyless',
          handle: async (m) => {
            again.push(Number(m.offset));
          },
        }),
      ),
      { defaultValue: undefined },
    );
    const assigned = await within(20_000, () =>
      adapter.events.some((e) => e.kind === 'assigned' && e.partitions.length > 0),
    );
    await eventTopics.producer.send({ topic, messages: [{ key: 'k0', value: 'marker', partition: 0 }] });
    await within(20_000, () => again.length > 0);
    await receiver.close();
    await secondOutput;
    expect(assigned).toBe(true);
    expect(again).toEqual([RECORDS]);
  });

  it("with failurePolicy 'error', a handler error reaches the output as a MessageError naming the key, topic, partition and offset", async () => {
    const topic = await topicWithKeyless();
    const receiver = kind.receiver(unique('group'), [topic]);
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch<KafkaMessage, string, void>({
          key: (m) => m.key?.toString() ?? 'keyless',
          handle: async (m) => {
            if (m.offset === '3') throw new Error('boom');
          },
          failurePolicy: 'error',
        }),
      ),
      { defaultValue: undefined },
    );
    const error = await errorWithin(output, 20_000);
    await receiver.close();
    expect(error).toBeInstanceOf(MessageError);
    expect(error).toMatchObject({ key: 'k3', source: `topic '${topic}' partition 0 offset 3` });
    expect((error as MessageError).cause).toEqual(new Error('boom'));
  });
});

describe(`Kafka with no failure policy on ${ADAPTERS[0]?.name}`, () => {
  it("retries a failing record in its key's mailbox while the other keys' records are handled, commits nothing past it while it fails, and commits everything once it succeeds", async () => {
    const kind = ADAPTERS[0] as ClientAdapter;
    const topic = await topicWithKeyless();
    const groupId = unique('group');
    const logged: string[] = [];
    jest.spyOn(console, 'error').mockImplementation((text: unknown) => {
      logged.push(String(text));
    });
    const handled: number[] = [];
    // The committed offset at each failure: never past the failing record.
    const committedAtFailure: number[] = [];
    let failures = 0;
    const receiver = kind.receiver(groupId, [topic], { commitIntervalMs: 50 });
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch<KafkaMessage, string, void>({
          key: (m) => m.key?.toString() ?? 'keyless',
          handle: async (m) => {
            if (m.offset === '3' && failures < 2) {
              failures++;
              // Long enough for the records after it, of other keys, to finish and be committable.
              await new Promise((resolve) => setTimeout(resolve, 200));
              committedAtFailure.push(
                Number((await offsets(eventTopics.client, groupId, topic)).committed.get(0)),
              );
              throw new Error(`attempt ${failures} failed`);
            }
            handled.push(Number(m.offset));
          },
        }),
      ),
      { defaultValue: undefined },
    );
    const allHandled = await within(30_000, () => handled.length === RECORDS);
    const allCommitted = await within(10_000, async () => {
      const { committed, end } = await offsets(eventTopics.client, groupId, topic);
      return Number(committed.get(0)) === Number(end.get(0));
    });
    await receiver.close();
    await output;
    jest.restoreAllMocks();

    expect(allHandled).toBe(true);
    expect(failures).toBe(2);
    expect(handled.filter((n) => n === 3)).toEqual([3]);
    // The other keys' records did not wait for it: most were handled before it.
    expect(handled.indexOf(3)).toBeGreaterThan(RECORDS / 2);
    expect(committedAtFailure.every((committed) => committed <= 3)).toBe(true);
    expect(allCommitted).toBe(true);
    expect(logged).toHaveLength(2);
    expect(logged[0]).toContain(
      `attempt 1 at the message of key k3 of topic '${topic}' partition 0 offset 3`,
    );
  });
});
