import { AckPolicy, type JetStreamManager, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { keyedDispatch } from 'keyed-dispatch';
import { fromJetStream, type JetStreamMessage } from 'keyed-dispatch/nats';
import type { Subscription } from 'rxjs';
import { within } from '../kafka/broker';
import { startBroker } from '../support/brokers';
import { deferred, sleep } from '../support/waits';

/** Stream and subject names unique to this run, so reruns start clean. */
const RUN = `kd_spec_ack_wait_${process.pid}_${Date.now()}`;
const DURABLE = 'workers';
/** The consumers' `ack_wait`: messages held longer than this must not come back while this process holds them. */
const ACK_WAIT_MS = 1000;
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

/** A stream with one durable pull consumer of `ack_wait` 1 s, and `count` messages `0…count-1` on one subject. */
async function oneKeyOf(name: string, count: number) {
  const stream = `${RUN}_${name}`;
  const subject = `${RUN}.${name}.k`;
  await jsm.streams.add({ name: stream, subjects: [`${RUN}.${name}.>`] });
  created.push(stream);
  await jsm.consumers.add(stream, {
    durable_name: DURABLE,
    ack_policy: AckPolicy.Explicit,
    ack_wait: ACK_WAIT_MS * 1_000_000,
  });
  const js = jetstream(nc);
  await Promise.all(Array.from({ length: count }, (_, n) => js.publish(subject, String(n))));
  return { stream, consumer: await jetstream(nc).consumers.get(stream, DURABLE) };
}

/** What the handlers saw: the payloads in the order they ran, and each run's delivery count. */
class Runs {
  readonly order: number[] = [];
  readonly deliveryCounts: number[] = [];

  see(m: JetStreamMessage): void {
    this.order.push(Number(text.decode(m.data)));
    this.deliveryCounts.push(m.deliveryCount);
  }
}

/** Subscribes, and resolves once `count` messages were acknowledged (the output errors reject it). */
function consume(
  consumer: Awaited<ReturnType<typeof oneKeyOf>>['consumer'],
  count: number,
  handle: (m: JetStreamMessage) => Promise<void> | unknown[],
  key: (m: JetStreamMessage) => string = (m) => m.subject,
): { subscription: Subscription; allSettled: Promise<void> } {
  const allSettled = deferred();
  let settled = 0;
  const subscription = fromJetStream({
    consumer,
    maxWaitMs: 1000,
    onSettled: () => {
      if (++settled === count) allSettled.resolve();
    },
  })
    .pipe(keyedDispatch({ key, handle }))
    .subscribe({ error: (err) => allSettled.reject(err) });
  return { subscription, allSettled: allSettled.promise };
}

describe('fromJetStream with messages held longer than ack_wait', () => {
  it('runs each message of a key once and in order while one handler runs 2.5 times ack_wait and the rest wait behind it', async () => {
    const { stream, consumer } = await oneKeyOf('slow_head', 21);
    const runs = new Runs();
    const { subscription, allSettled } = consume(consumer, 21, async (m) => {
      runs.see(m);
      if (m.seq === 1) await sleep(2.5 * ACK_WAIT_MS);
    });
    try {
      await allSettled;
      // A message that came back would run again within ack_wait of its first acknowledgement.
      await within(ACK_WAIT_MS + 500, () => runs.order.length > 21);

      expect(runs.order).toEqual(Array.from({ length: 21 }, (_, n) => n));
      expect(runs.deliveryCounts.every((n) => n === 1)).toBe(true);
      expect((await jsm.consumers.info(stream, DURABLE)).num_redelivered).toBe(0);
    } finally {
      subscription.unsubscribe();
    }
  }, 30_000);

  it('runs each message of a hot key once and in order when its backlog takes several times ack_wait', async () => {
    const count = 150;
    const { stream, consumer } = await oneKeyOf('hot_key', count);
    const runs = new Runs();
    const { subscription, allSettled } = consume(consumer, count, async (m) => {
      runs.see(m);
      await sleep(20);
    });
    try {
      await allSettled;
      await within(ACK_WAIT_MS + 500, () => runs.order.length > count);

      expect(runs.order).toEqual(Array.from({ length: count }, (_, n) => n));
      expect(runs.deliveryCounts.every((n) => n === 1)).toBe(true);
      expect((await jsm.consumers.info(stream, DURABLE)).num_redelivered).toBe(0);
    } finally {
      subscription.unsubscribe();
    }
  }, 30_000);

  it('does not run again a message the server redelivers while this process still holds it (its event loop was blocked past ack_wait)', async () => {
    const { stream, consumer } = await oneKeyOf('blocked', 10);
    const runs = new Runs();
    let blocked = false;
    const { subscription, allSettled } = consume(
      consumer,
      10,
      async (m) => {
        runs.see(m);
        // The first message still runs when the redeliveries arrive.
        if (m.seq === 1) await sleep(4 * ACK_WAIT_MS);
      },
      (m) => {
        // Admitting the last message blocks the event loop: nothing can tell the server the others are held.
        if (m.seq === 10 && !blocked) {
          blocked = true;
          for (const until = Date.now() + 2 * ACK_WAIT_MS; Date.now() < until; );
        }
        return m.subject;
      },
    );
    try {
      await allSettled;
      await within(ACK_WAIT_MS + 500, () => runs.order.length > 10);

      expect(runs.order).toEqual(Array.from({ length: 10 }, (_, n) => n));
      // The server did redeliver them (each delivery takes a consumer sequence); the copies were not run,
      // and acknowledging the first deliveries settled them.
      const info = await jsm.consumers.info(stream, DURABLE);
      expect(info.delivered.consumer_seq).toBeGreaterThan(10);
      expect(info.num_ack_pending).toBe(0);
    } finally {
      subscription.unsubscribe();
    }
  }, 30_000);
});
