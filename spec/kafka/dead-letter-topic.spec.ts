import { join } from 'node:path';
import { keyedDispatch, MessageError, retryPolicy, ThreadExecutor, threadHandler } from 'keyed-dispatch';
import {
  DEAD_LETTER_HEADERS,
  deadLetterToTopic,
  type KafkaMessage,
  type KafkaProducer,
  KafkaReceiver,
  type KafkaReceiverOptions,
  kafkaKey,
  type TopicPartitionOffset,
} from 'keyed-dispatch/kafka';
import { lastValueFrom } from 'rxjs';
import { ADAPTERS, type ClientAdapter } from './adapters';
import { createTopic, offsets, unique, within } from './broker';
import { useEventTopics } from './events';
import { ObservedAdapter } from './observed-adapter';
import { useProducers } from './producers';

jest.setTimeout(60_000);

const eventTopics = useEventTopics('dead-letter-topic');
const producers = useProducers(eventTopics);

/** Records in each source topic (one partition), keyed k0, k1, k2 in turn. */
const RECORDS = 6;
/** The offset of the record whose handler always fails. */
const POISON = 2;

class PoisonError extends Error {}

/** A one-partition topic of `RECORDS` records; the one at `POISON` has headers and a value of `poisonBytes`. */
async function sourceTopic(poisonBytes = 6): Promise<string> {
  const topic = unique('dlt-source');
  await createTopic(eventTopics.client, topic, 1);
  await eventTopics.producer.send({
    topic,
    messages: Array.from({ length: RECORDS }, (_, n) => ({
      key: `k${n % 3}`,
      value: n === POISON ? 'p'.repeat(poisonBytes) : String(n),
      partition: 0,
      ...(n === POISON && { headers: { trace: 'abc', hop: ['a', 'b'] } }),
    })),
  });
  return topic;
}

/** The adapter of `kind`, with the positions of partition 0 it was asked to commit logged in `log` as `commit N`. */
class CommitLog extends ObservedAdapter {
  constructor(
    kind: ClientAdapter,
    groupId: string,
    topic: string,
    private readonly log: string[],
  ) {
    super(kind.adapter(groupId, [topic]));
  }

  override commit(positions: readonly TopicPartitionOffset[]): Promise<void> {
    for (const p of positions) this.log.push(`commit ${p.offset}`);
    return super.commit(positions);
  }
}

/**
 * `producer` with its sends held until `release()`, and each acknowledgement logged in `log` as `acked`
 * (the producer itself sends: a held send reaches the broker only once released).
 */
function heldProducer(producer: KafkaProducer, log: string[]): { producer: KafkaProducer; release(): void } {
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const held = Object.create(producer) as KafkaProducer;
  held.send = async (record: never) => {
    await released;
    const result = await producer.send(record);
    log.push('acked');
    return result;
  };
  return { producer: held, release };
}

/** Runs a member of `groupId` whose handler fails at `POISON`, dead-lettering to `deadLetters` through `producer`. */
function runMember(
  kind: ClientAdapter,
  groupId: string,
  topic: string,
  producer: KafkaProducer,
  deadLetters: string,
  log: string[],
) {
  const outcomes: string[] = [];
  const seen: KafkaMessage[] = [];
  const options: KafkaReceiverOptions = {
    commitIntervalMs: 50,
    onSettled: (m, outcome) => outcomes.push(`${m.offset} ${outcome}`),
  };
  const adapter = new CommitLog(kind, groupId, topic, log);
  const receiver = new KafkaReceiver(adapter, options);
  const output = lastValueFrom(
    receiver.pipe(
      keyedDispatch<KafkaMessage, string, void>({
        key: kafkaKey,
        handle: async (m) => {
          seen.push(m);
          if (m.offset === String(POISON)) throw new PoisonError(`cannot bill ${kafkaKey(m)}`);
        },
        failurePolicy: retryPolicy({
          maxAttempts: 2,
          backoff: { initialMs: 10 },
          deadLetter: deadLetterToTopic(producer, deadLetters),
        }),
      }),
    ),
    { defaultValue: undefined },
  );
  const end: { error?: unknown; ended: boolean } = { ended: false };
  output.then(
    () => {
      end.ended = true;
    },
    (error: unknown) => {
      end.error = error;
      end.ended = true;
    },
  );
  return { adapter, receiver, output, end, outcomes, seen };
}

/** The records of `topic`, read from its start by a new member on `kind`. */
async function readAll(kind: ClientAdapter, topic: string, count: number): Promise<KafkaMessage[]> {
  const receiver = kind.receiver(unique('reader'), [topic]);
  const read: KafkaMessage[] = [];
  const output = lastValueFrom(
    receiver.pipe(keyedDispatch({ key: () => 'all', handle: (m) => [read.push(m)] })),
    {
      defaultValue: undefined,
    },
  );
  await within(20_000, () => read.length >= count);
  await receiver.close();
  await output;
  return read;
}

/** Whether a `log` entry is a commit past the failed record. */
const pastPoison = (entry: string) => entry.startsWith('commit ') && Number(entry.slice(7)) > POISON;

const text = (bytes: unknown) => (bytes as Uint8Array | undefined)?.toString();

describe.each(ADAPTERS)('deadLetterToTopic, consumed on $name', (kind) => {
  it.each(producers)(
    'produces a record whose handler keeps failing to the dead-letter topic with its key, value and headers and the source, error, attempts and timestamp headers, through a $name producer, and commits its offset only once the broker acknowledged it',
    async (client) => {
      const topic = await sourceTopic();
      const deadLetters = unique('dlt');
      await createTopic(eventTopics.client, deadLetters, 1);
      const groupId = unique('group');
      const log: string[] = [];
      const held = heldProducer(client.producer(), log);
      const member = runMember(kind, groupId, topic, held.producer, deadLetters, log);

      // The other keys' records finish (k2's next one waits behind it in its mailbox), and the receiver
      // commits up to the failed record, while its dead letter is held.
      const othersDone = await within(20_000, () => member.outcomes.length === RECORDS - 2);
      const committedMeanwhile = await within(
        20_000,
        async () => (await offsets(eventTopics.client, groupId, topic)).committed.get(0) === String(POISON),
      );
      const heldLog = [...log];
      const heldEnd = (await offsets(eventTopics.client, groupId, deadLetters)).end.get(0);

      held.release();
      const settled = await within(20_000, () => member.outcomes.length === RECORDS);
      const committedAll = await within(20_000, async () => {
        const { committed, end } = await offsets(eventTopics.client, groupId, topic);
        return committed.get(0) === end.get(0);
      });
      await member.receiver.close();
      await member.output;

      expect([othersDone, committedMeanwhile, settled, committedAll]).toEqual([true, true, true, true]);
      // Held: nothing sent, and no commit past the failed record.
      expect(heldEnd).toBe('0');
      expect(heldLog.filter(pastPoison)).toEqual([]);
      // Released: the first commit past it comes after the broker's acknowledgement.
      const firstPast = log.findIndex(pastPoison);
      expect(log.indexOf('acked')).toBeGreaterThanOrEqual(0);
      expect(log.indexOf('acked')).toBeLessThan(firstPast);
      expect(member.outcomes).toContain(`${POISON} dead-lettered`);

      const poison = member.seen.find((m) => m.offset === String(POISON)) as KafkaMessage;
      const [dead] = await readAll(kind, deadLetters, 1);
      expect([text(dead.key), text(dead.value)]).toEqual(['k2', 'pppppp']);
      const { headers } = dead;
      expect(text(headers.trace)).toBe('abc');
      expect((headers.hop as Uint8Array[]).map(text)).toEqual(['a', 'b']);
      expect({
        topic: text(headers[DEAD_LETTER_HEADERS.topic]),
        partition: text(headers[DEAD_LETTER_HEADERS.partition]),
        offset: text(headers[DEAD_LETTER_HEADERS.offset]),
        errorClass: text(headers[DEAD_LETTER_HEADERS.errorClass]),
        errorMessage: text(headers[DEAD_LETTER_HEADERS.errorMessage]),
        attempts: text(headers[DEAD_LETTER_HEADERS.attempts]),
        originalTimestamp: text(headers[DEAD_LETTER_HEADERS.originalTimestamp]),
      }).toEqual({
        topic,
        partition: '0',
        offset: String(POISON),
        errorClass: 'PoisonError',
        errorMessage: 'cannot bill k2',
        attempts: '2',
        originalTimestamp: poison.timestamp,
      });
      expect(text(headers[DEAD_LETTER_HEADERS.errorStack])).toContain('cannot bill k2');
    },
  );

  // The producers take turns over the consumer set-ups: each refusal is the producer's, each commit the consumer's.
  it.each([producers[ADAPTERS.indexOf(kind) % producers.length]])(
    'errors the output with a MessageError naming the record when the broker refuses its dead letter through a $name producer, and does not commit past the record',
    async (client) => {
      // The dead-letter topic takes records of at most 1 KiB: the failed record's 2 KiB value is refused.
      const topic = await sourceTopic(2048);
      const deadLetters = unique('dlt-small');
      await createTopic(eventTopics.client, deadLetters, 1, { 'max.message.bytes': '1024' });
      const groupId = unique('group');
      const member = runMember(kind, groupId, topic, client.producer(), deadLetters, []);

      const ended = await within(30_000, () => member.end.ended);
      await member.receiver.close();
      const { error } = member.end;

      expect(ended).toBe(true);
      expect(error).toBeInstanceOf(MessageError);
      expect((error as MessageError).source).toBe(`topic '${topic}' partition 0 offset ${POISON}`);
      expect((error as MessageError).cause).not.toBeInstanceOf(PoisonError);
      expect(member.outcomes).not.toContain(`${POISON} dead-lettered`);
      const { committed } = await offsets(eventTopics.client, groupId, topic);
      expect(Number(committed.get(0))).toBeLessThanOrEqual(POISON);
      expect((await offsets(eventTopics.client, groupId, deadLetters)).end.get(0)).toBe('0');
    },
  );
});

describe('deadLetterToTopic headers', () => {
  it('replaces the dead-letter headers a record already has, and cuts a long error to maxErrorLength, a thrown string named by its type', async () => {
    const topic = unique('dlt-again');
    const deadLetters = unique('dlt');
    await createTopic(eventTopics.client, topic, 1);
    await createTopic(eventTopics.client, deadLetters, 1);
    // A record read back from a dead-letter topic and dead-lettered again.
    await eventTopics.producer.send({
      topic,
      messages: [
        {
          key: 'k',
          value: 'v',
          headers: { [DEAD_LETTER_HEADERS.topic]: 'older', [DEAD_LETTER_HEADERS.attempts]: '5', trace: 't' },
        },
      ],
    });
    const [kind] = ADAPTERS;
    const outcomes: string[] = [];
    const receiver = kind.receiver(unique('group'), [topic], {
      onSettled: (_m, outcome) => outcomes.push(outcome),
    });
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch<KafkaMessage, string, void>({
          key: kafkaKey,
          handle: () => {
            throw 'x'.repeat(3000);
          },
          failurePolicy: retryPolicy({
            maxAttempts: 1,
            deadLetter: deadLetterToTopic(producers[1].producer(), deadLetters, { maxErrorLength: 100 }),
          }),
        }),
      ),
      { defaultValue: undefined },
    );
    const settled = await within(20_000, () => outcomes.length === 1);
    await receiver.close();
    await output;
    const [dead] = await readAll(kind, deadLetters, 1);

    expect([settled, outcomes]).toEqual([true, ['dead-lettered']]);
    const { headers } = dead;
    expect({
      topic: text(headers[DEAD_LETTER_HEADERS.topic]),
      attempts: text(headers[DEAD_LETTER_HEADERS.attempts]),
      errorClass: text(headers[DEAD_LETTER_HEADERS.errorClass]),
      errorMessage: text(headers[DEAD_LETTER_HEADERS.errorMessage]),
      errorStack: headers[DEAD_LETTER_HEADERS.errorStack],
      trace: text(headers.trace),
    }).toEqual({
      topic,
      attempts: '1',
      errorClass: 'string',
      errorMessage: `${'x'.repeat(99)}…`,
      errorStack: undefined,
      trace: 't',
    });
  });
});

describe('deadLetterToTopic on thread lanes', () => {
  it('produces the records whose thread handler keeps failing to the dead-letter topic, from the main thread, with their key, value, headers and error', async () => {
    const topic = await sourceTopic();
    const deadLetters = unique('dlt');
    await createTopic(eventTopics.client, deadLetters, 1);
    const kind = ADAPTERS[1];
    const executor = new ThreadExecutor({ workers: 1 });
    const outcomes: string[] = [];
    const receiver = kind.receiver(unique('group'), [topic], {
      onSettled: (m, outcome) => outcomes.push(`${m.offset} ${outcome}`),
    });
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch<KafkaMessage, string, void>({
          key: kafkaKey,
          // Every record fails in its thread; the dead letters are sent from the main thread.
          handle: threadHandler<KafkaMessage, void>(join(__dirname, 'dead-letter-handler.js'), 'fail'),
          executor,
          failurePolicy: retryPolicy({
            maxAttempts: 2,
            backoff: { initialMs: 10 },
            deadLetter: deadLetterToTopic(producers[1].producer(), deadLetters),
          }),
        }),
      ),
      { defaultValue: undefined },
    );
    try {
      await within(20_000, () => outcomes.length === RECORDS);
    } finally {
      await receiver.close();
      await output;
      await executor.close();
    }
    const dead = await readAll(kind, deadLetters, RECORDS);

    expect(outcomes.filter((o) => !o.endsWith('dead-lettered'))).toEqual([]);
    const poison = dead.find(
      (m) => text(m.headers[DEAD_LETTER_HEADERS.offset]) === String(POISON),
    ) as KafkaMessage;
    expect([text(poison.key), text(poison.value), text(poison.headers.trace)]).toEqual([
      'k2',
      'pppppp',
      'abc',
    ]);
    expect({
      errorClass: text(poison.headers[DEAD_LETTER_HEADERS.errorClass]),
      errorMessage: text(poison.headers[DEAD_LETTER_HEADERS.errorMessage]),
      attempts: text(poison.headers[DEAD_LETTER_HEADERS.attempts]),
    }).toEqual({ errorClass: 'TypeError', errorMessage: 'cannot bill k2 in a thread', attempts: '2' });
  });
});
