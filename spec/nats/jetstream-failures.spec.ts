import { AckPolicy, type JetStreamManager, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { keyedDispatch, MessageError, retryPolicy } from 'keyed-dispatch';
import { fromJetStream, type JetStreamMessage } from 'keyed-dispatch/nats';
import { firstValueFrom, lastValueFrom } from 'rxjs';
import { within } from '../kafka/broker';
import { startBroker } from '../support/brokers';

/** Stream and subject names unique to this run, so reruns start clean. */
const RUN = `kd_spec_failures_${process.pid}_${Date.now()}`;
const DURABLE = 'workers';
const text = new TextDecoder();

let nc: Awaited<ReturnType<typeof connect>>;
let jsm: JetStreamManager;
const created: string[] = [];

beforeAll(async () => {
  startBroker('nats');
  nc = await connect({ servers: '127.0.0.1:4222' });
  jsm = await jetstreamManager(nc);
}, 60_000);

afterAll(async () => {
  for (const stream of created) await jsm.streams.delete(stream);
  await nc.close();
});

/**
 * A stream with one durable pull consumer (`ackWaitMs`: when an unacknowledged message comes back) and
 * `data` published on subject `<prefix>.k`; returns the consumer.
 */
async function consumerWith(name: string, maxDeliver: number, ackWaitMs: number, ...data: string[]) {
  const stream = `${RUN}_${name}`;
  const prefix = `${RUN}.${name}`;
  await jsm.streams.add({ name: stream, subjects: [`${prefix}.>`] });
  created.push(stream);
  await jsm.consumers.add(stream, {
    durable_name: DURABLE,
    ack_policy: AckPolicy.Explicit,
    ack_wait: ackWaitMs * 1_000_000,
    max_deliver: maxDeliver,
  });
  for (const d of data) await jetstream(nc).publish(`${prefix}.k`, d);
  return { stream, prefix, consumer: await jetstream(nc).consumers.get(stream, DURABLE) };
}

/** The account of a message whose payload is JSON: a key selector that throws on a malformed message. */
const account = (m: JetStreamMessage): string => JSON.parse(text.decode(m.data)).account;

describe('fromJetStream with a message whose key selector throws', () => {
  it.each(['redeliver', 'ack'] as const)(
    "onFailed '%s', failurePolicy 'error': the output errors with a MessageError naming its subject, stream and sequence, and the message is redelivered",
    async (onFailed) => {
      const { stream, prefix, consumer } = await consumerWith(`key_throws_${onFailed}`, -1, 1000, 'not json');

      const error = await lastValueFrom(
        fromJetStream({ consumer, maxWaitMs: 1000, onFailed }).pipe(
          keyedDispatch({ key: account, handle: () => [], failurePolicy: 'error' }),
        ),
      ).catch((err: unknown) => err);

      expect(error).toBeInstanceOf(MessageError);
      expect(error).toMatchObject({
        key: undefined,
        source: `subject '${prefix}.k' stream '${stream}' sequence 1`,
      });
      expect((error as MessageError).cause).toMatchObject({ name: 'SyntaxError' });
      // Never acknowledged: it comes back once ack_wait (1 s) has passed.
      const again = await firstValueFrom(
        fromJetStream({ consumer, maxWaitMs: 1000 }).pipe(
          keyedDispatch({
            key: (m) => m.seq,
            handle: (m) => [{ seq: m.seq, deliveryCount: m.deliveryCount }],
          }),
        ),
      );
      // At least the second delivery: one more may have gone to the failed fetch's pull request, still
      // open on the server until its expiry.
      expect(again.seq).toBe(1);
      expect(again.deliveryCount).toBeGreaterThanOrEqual(2);
    },
    30_000,
  );

  it('with a dead letter: the dead letter gets the message, with no key, and it is acknowledged as dead-lettered', async () => {
    const { stream, consumer } = await consumerWith(
      'key_throws_dead_letter',
      -1,
      1000,
      'not json',
      JSON.stringify({ account: 'a' }),
    );
    const deadLetters: Array<{ seq: number; key: unknown; error: string }> = [];
    const outcomes: string[] = [];
    const receiver = fromJetStream({
      consumer,
      maxWaitMs: 1000,
      onSettled: (m, outcome) => outcomes.push(`${m.seq}:${outcome}`),
    });
    const subscription = receiver
      .pipe(
        keyedDispatch({
          key: account,
          handle: () => [],
          failurePolicy: retryPolicy<JetStreamMessage, string>({
            deadLetter: (m, error, context) => {
              deadLetters.push({ seq: m.seq, key: context.key, error: (error as Error).name });
            },
          }),
        }),
      )
      .subscribe();
    try {
      expect(await within(10_000, () => outcomes.length === 2)).toBe(true);
      // Acknowledged: nothing comes back after ack_wait (1 s).
      await nc.flush();
      expect(await within(1500, () => outcomes.length > 2)).toBe(false);

      expect(deadLetters).toEqual([{ seq: 1, key: undefined, error: 'SyntaxError' }]);
      expect(outcomes).toEqual(['1:dead-lettered', '2:done']);
      expect((await jsm.consumers.info(stream, DURABLE)).num_ack_pending).toBe(0);
    } finally {
      await receiver.close();
      subscription.unsubscribe();
    }
  }, 30_000);
});

describe('fromJetStream with messages that keep failing', () => {
  it("onFailed 'redeliver': a message that keeps failing is redelivered at once, up to the consumer's max_deliver, while the others go on", async () => {
    const { stream, prefix, consumer } = await consumerWith('poison', 3, 30_000, 'poison', 'first');
    const deliveries: Array<{ data: string; deliveryCount: number }> = [];
    const subscription = fromJetStream({ consumer, maxWaitMs: 1000 })
      .pipe(
        keyedDispatch({
          key: (m) => m.subject,
          handle: (m: JetStreamMessage) => {
            const data = text.decode(m.data);
            deliveries.push({ data, deliveryCount: m.deliveryCount });
            if (data === 'poison') throw new Error('poison cannot be handled');
            return [];
          },
          // Gives up at once, without a dead letter: settled failed, and naked.
          failurePolicy: retryPolicy({ maxAttempts: 1 }),
        }),
      )
      .subscribe();
    try {
      const poisonDeliveries = () => deliveries.filter((d) => d.data === 'poison');
      expect(await within(10_000, () => poisonDeliveries().length === 3)).toBe(true);
      await jetstream(nc).publish(`${prefix}.k`, 'after');
      expect(await within(10_000, () => deliveries.some((d) => d.data === 'after'))).toBe(true);
      // No fourth delivery: the server stopped at max_deliver.
      expect(await within(1500, () => poisonDeliveries().length > 3)).toBe(false);

      expect(poisonDeliveries().map((d) => d.deliveryCount)).toEqual([1, 2, 3]);
      expect(deliveries.filter((d) => d.data !== 'poison').map((d) => d.data)).toEqual(['first', 'after']);
      // The server gave up on it: no longer pending, and the consumer's floor went past it.
      const info = await jsm.consumers.info(stream, DURABLE);
      expect(info.num_ack_pending).toBe(0);
      expect(info.ack_floor.stream_seq).toBe(3);
    } finally {
      subscription.unsubscribe();
    }
  }, 30_000);
});
