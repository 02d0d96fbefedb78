import { AckPolicy, type JetStreamManager, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { DispatchStats, keyedDispatch, openReceiver } from 'keyed-dispatch';
import { fromJetStream, type JetStreamMessage, type JetStreamOptions } from 'keyed-dispatch/nats';
import { DispatchRuntime, dispatchComponent } from 'keyed-dispatch/runtime';
import { firstValueFrom, lastValueFrom, type Subscription } from 'rxjs';
import { within } from '../kafka/broker';
import { buildFixture, ChildConsumer, startBroker } from '../support/brokers';
import { closeWhileRunning } from '../support/close-while-running';
import { deferred } from '../support/waits';

/** Stream and subject names unique to this run, so reruns start clean. */
const RUN = `kd_spec_${process.pid}_${Date.now()}`;
const DURABLE = 'workers';
const text = new TextDecoder();

let nc: Awaited<ReturnType<typeof connect>>;
let jsm: JetStreamManager;
let consumerScript: string;
const created: string[] = [];

beforeAll(async () => {
  startBroker('nats');
  nc = await connect({ servers: '127.0.0.1:4222' });
  jsm = await jetstreamManager(nc);
  consumerScript = await buildFixture('nats-consumer');
}, 60_000);

afterAll(async () => {
  for (const stream of created) await jsm.streams.delete(stream);
  await nc.close();
});

/** A stream with one durable pull consumer; returns the stream name and its subject prefix. */
async function streamWithConsumer(
  name: string,
  ackWaitMs: number,
): Promise<{ stream: string; prefix: string }> {
  const stream = `${RUN}_${name}`;
  const prefix = `${RUN}.${name}`;
  await jsm.streams.add({ name: stream, subjects: [`${prefix}.>`] });
  created.push(stream);
  await jsm.consumers.add(stream, {
    durable_name: DURABLE,
    ack_policy: AckPolicy.Explicit,
    ack_wait: ackWaitMs * 1_000_000,
    max_deliver: 5,
  });
  return { stream, prefix };
}

/** Publishes `perKey` messages to each of `keys` subjects, interleaved; the payload is the number within its key. */
async function publish(prefix: string, keys: number, perKey: number): Promise<void> {
  const js = jetstream(nc);
  for (let n = 0; n < perKey; n++) {
    const acks: Promise<unknown>[] = [];
    for (let k = 0; k < keys; k++) acks.push(js.publish(`${prefix}.k${k}`, String(n)));
    await Promise.all(acks);
  }
}

/**
 * The consumer's count of delivered, unacknowledged messages once it reads `expected`, or the last count
 * read after 10 s. The server applies acknowledgements from a queue of its own, apart from the requests
 * that read consumer info: a read right after the acks were sent and flushed may still count some.
 */
async function ackPendingSettled(stream: string, expected: number): Promise<number> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const pending = (await jsm.consumers.info(stream, DURABLE)).num_ack_pending;
    if (pending === expected || Date.now() > deadline) return pending;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Checks that each subject's messages arrive in publish order; counts every handled message. */
class OrderCheck {
  readonly handled = new Map<number, number>();
  readonly outOfOrder: string[] = [];
  private readonly last = new Map<string, number>();

  see(m: JetStreamMessage): void {
    const n = Number(text.decode(m.data));
    const previous = this.last.get(m.subject) ?? -1;
    if (n !== previous + 1) this.outOfOrder.push(`${m.subject}: ${n} after ${previous}`);
    this.last.set(m.subject, n);
    this.handled.set(m.seq, (this.handled.get(m.seq) ?? 0) + 1);
  }
}

describe('fromJetStream', () => {
  it('handles 10,000 messages over 500 subjects: each acknowledged once, in subject order, within the window', async () => {
    const { stream } = await streamWithConsumer('bulk', 30_000).then(async (s) => {
      await publish(s.prefix, 500, 20);
      return s;
    });
    const window = 64;
    const order = new OrderCheck();
    const stats = new DispatchStats();
    const done = deferred();
    let started = 0;
    let settled = 0;
    let maxHeldAtHandler = 0;
    let maxAckPendingOnServer = 0;
    const consumer = await jetstream(nc).consumers.get(stream, DURABLE);
    const sub: Subscription = fromJetStream({
      consumer,
      maxWaitMs: 1000,
      onSettled: (_m, outcome) => {
        expect(outcome).toBe('done');
        if (++settled === 10_000) done.resolve();
      },
    })
      .pipe(
        keyedDispatch({
          maxInFlight: window,
          stats,
          key: (m) => m.subject,
          handle: async (m) => {
            order.see(m);
            started++;
            // Delivered and not yet acknowledged, as seen here: this handler's message included.
            maxHeldAtHandler = Math.max(maxHeldAtHandler, stats.snapshot().inFlight, started - settled);
            if (started % 200 === 0) {
              const info = await jsm.consumers.info(stream, DURABLE);
              maxAckPendingOnServer = Math.max(maxAckPendingOnServer, info.num_ack_pending);
            }
            await new Promise((resolve) => setImmediate(resolve));
          },
        }),
      )
      .subscribe({ error: (err) => done.reject(err) });
    await done.promise;
    sub.unsubscribe();
    await nc.flush();

    expect(order.outOfOrder).toEqual([]);
    expect(order.handled.size).toBe(10_000);
    expect([...order.handled.values()].every((n) => n === 1)).toBe(true);
    expect(maxHeldAtHandler).toBeLessThanOrEqual(window);
    expect(maxAckPendingOnServer).toBeGreaterThan(0);
    expect(maxAckPendingOnServer).toBeLessThanOrEqual(window);
    expect(await ackPendingSettled(stream, 0)).toBe(0);
    const info = await jsm.consumers.info(stream, DURABLE);
    // 10,000 deliveries in all, every one acknowledged: each message was delivered and acknowledged once.
    expect(info.delivered.consumer_seq).toBe(10_000);
    expect(info.ack_floor.consumer_seq).toBe(10_000);
    expect(info.num_redelivered).toBe(0);
    expect(info.num_pending).toBe(0);
  }, 60_000);

  it('redelivers the messages of a consumer killed before acknowledging to another, which acknowledges each once', async () => {
    const { stream, prefix } = await streamWithConsumer('recovery', 1000);
    await publish(prefix, 10, 10);
    const window = 20;

    const doomed = new ChildConsumer<{ subject: string; seq: number }>(consumerScript, {
      stream,
      consumer: DURABLE,
      maxInFlight: window,
    });
    const held = await doomed.waitForLines(window);
    await doomed.kill();
    expect((await jsm.consumers.info(stream, DURABLE)).num_ack_pending).toBe(window);

    const order = new OrderCheck();
    const deliveryCounts = new Map<number, number>();
    const done = deferred();
    let settled = 0;
    const consumer = await jetstream(nc).consumers.get(stream, DURABLE);
    const sub = fromJetStream({
      consumer,
      maxWaitMs: 1000,
      onSettled: () => {
        if (++settled === 100) done.resolve();
      },
    })
      .pipe(
        keyedDispatch({
          maxInFlight: 8,
          key: (m) => m.subject,
          handle: (m) => {
            order.see(m);
            deliveryCounts.set(m.seq, m.deliveryCount);
            return [];
          },
        }),
      )
      .subscribe({ error: (err) => done.reject(err) });
    await done.promise;
    sub.unsubscribe();
    await nc.flush();

    expect(order.handled.size).toBe(100);
    expect([...order.handled.values()].every((n) => n === 1)).toBe(true);
    for (const { seq } of held) expect(deliveryCounts.get(seq)).toBe(2);
    expect([...deliveryCounts.values()].filter((n) => n === 1)).toHaveLength(100 - window);
    expect(await ackPendingSettled(stream, 0)).toBe(0);
    expect((await jsm.consumers.info(stream, DURABLE)).num_pending).toBe(0);
  }, 30_000);
  it.each([
    ['redeliver', 'redelivers it at once', { seq: 1, data: 'boom', deliveryCount: 2 }],
    ['ack', 'takes it as done', { seq: 2, data: 'after', deliveryCount: 1 }],
    ['term', 'never redelivers it', { seq: 2, data: 'after', deliveryCount: 1 }],
  ] as const)(
    "onFailed '%s': a message whose handler failed is settled as failed, and the server %s",
    async (onFailed, _, next) => {
      const { stream, prefix } = await streamWithConsumer(`failed_${onFailed}`, 30_000);
      const js = jetstream(nc);
      await js.publish(`${prefix}.k0`, 'boom');
      await js.publish(`${prefix}.k0`, 'after');
      const consumer = await jetstream(nc).consumers.get(stream, DURABLE);
      const settled = deferred<string>();

      const failing = fromJetStream({
        consumer,
        maxWaitMs: 1000,
        onFailed,
        onSettled: (m, outcome) => settled.resolve(`${text.decode(m.data)}:${outcome}`),
      }).pipe(
        keyedDispatch({
          maxInFlight: 1,
          key: (m) => m.subject,
          failurePolicy: 'error',
          handle: (m) => {
            if (text.decode(m.data) === 'boom') throw new Error('boom');
            return [];
          },
        }),
      );
      await expect(lastValueFrom(failing)).rejects.toThrow('boom');
      // Told once the nak, ack or term was sent.
      expect(await settled.promise).toBe('boom:failed');
      await nc.flush();

      const after = fromJetStream({ consumer, maxWaitMs: 1000 }).pipe(
        keyedDispatch({
          maxInFlight: 1,
          key: (m) => m.subject,
          handle: (m) => [{ seq: m.seq, data: text.decode(m.data), deliveryCount: m.deliveryCount }],
        }),
      );
      expect(await firstValueFrom(after)).toEqual(next);
    },
    30_000,
  );

  it('close() stops fetching, lets running messages finish and be acknowledged, leaves queued ones for redelivery, and completes', async () => {
    const { stream, prefix } = await streamWithConsumer('close', 30_000);
    await publish(prefix, 4, 5);
    const consumer = await jetstream(nc).consumers.get(stream, DURABLE);
    const settled: number[] = [];
    const receiver = fromJetStream({ consumer, maxWaitMs: 1000, onSettled: (m) => settled.push(m.seq) });
    const { handled, closed } = await closeWhileRunning(
      receiver,
      (m) => m.subject,
      (m) => m.seq,
    );
    await nc.flush();

    // 8 admitted over 4 subjects: the first of each ran and was acknowledged; the 4 queued behind them
    // were given back unacknowledged, for redelivery after ack_wait.
    expect(handled.sort()).toEqual(settled.sort());
    expect(handled).toHaveLength(4);
    expect(await ackPendingSettled(stream, 4)).toBe(4);
    expect(receiver.close()).toBe(closed);
  }, 30_000);

  /** Opens a session straight on the receiver's pull protocol and takes one message from it. */
  async function deliveredOne(options: JetStreamOptions) {
    const delivered = deferred<JetStreamMessage>();
    const session = fromJetStream(options)[openReceiver]({
      next: (m) => delivered.resolve(m),
      error: (err) => delivered.reject(err),
      complete: () => undefined,
      discard: () => [],
      settleFailed: (err) => delivered.reject(err),
    });
    session.request(1);
    return { session, message: await delivered.promise };
  }

  it('describes a message by its subject, stream and sequence, for errors about it', async () => {
    const { stream, prefix } = await streamWithConsumer('describe', 30_000);
    await jetstream(nc).publish(`${prefix}.k0`, 'd');
    const consumer = await jetstream(nc).consumers.get(stream, DURABLE);
    const { session, message } = await deliveredOne({ consumer, maxWaitMs: 1000 });
    session.settle(message, 'done');
    await session.cancel();

    expect(session.describe?.(message)).toBe(`subject '${prefix}.k0' stream '${stream}' sequence 1`);
  });

  it('acknowledges a message its dead letter took, whatever onFailed says: it is never delivered again', async () => {
    const { stream, prefix } = await streamWithConsumer('dead_lettered', 30_000);
    await jetstream(nc).publish(`${prefix}.k0`, 'poison');
    const consumer = await jetstream(nc).consumers.get(stream, DURABLE);
    const { session, message } = await deliveredOne({ consumer, maxWaitMs: 1000, onFailed: 'redeliver' });
    session.settle(message, 'dead-lettered', new Error('poison'));
    await session.cancel();
    await nc.flush();

    expect((await consumer.next({ expires: 1000 }))?.seq).toBeUndefined();
    expect(await ackPendingSettled(stream, 0)).toBe(0);
  });

  it('stopIntake stops fetching and keeps acknowledging: a message delivered before and settled after is acknowledged', async () => {
    const { stream, prefix } = await streamWithConsumer('stop_intake', 30_000);
    await jetstream(nc).publish(`${prefix}.k0`, 'first');
    const consumer = await jetstream(nc).consumers.get(stream, DURABLE);
    const { session, message } = await deliveredOne({ consumer, maxWaitMs: 1000 });
    session.stopIntake?.();
    session.settle(message, 'done');
    await session.cancel();
    await nc.flush();

    expect(await ackPendingSettled(stream, 0)).toBe(0);
    expect((await jsm.consumers.info(stream, DURABLE)).ack_floor.stream_seq).toBe(1);
  });

  it('a graceful runtime stop acknowledges every message it drained: a new fetch of the consumer gets none of them again', async () => {
    const { stream, prefix } = await streamWithConsumer('runtime_stop', 1000);
    await publish(prefix, 4, 10);
    const drained = new Set<number>();
    const windowFull = deferred();
    let admitted = 0;
    const runtime = new DispatchRuntime({
      components: [
        dispatchComponent({
          name: 'slow',
          source: fromJetStream({
            consumer: await jetstream(nc).consumers.get(stream, DURABLE),
            maxWaitMs: 1000,
          }),
          dispatch: {
            maxInFlight: 8,
            key: (m: JetStreamMessage) => {
              if (++admitted === 8) windowFull.resolve();
              return m.subject;
            },
            handle: async (m: JetStreamMessage) => {
              await new Promise((resolve) => setTimeout(resolve, 200));
              drained.add(m.seq);
            },
          },
        }),
      ],
    }).start();
    // 4 running (one per key) and 4 queued behind them: a drain of 'all' runs the 8.
    await windowFull.promise;
    const report = await runtime.stopGracefully({ drain: 'all' });

    const again: number[] = [];
    let handled = 0;
    const sub = fromJetStream({
      consumer: await jetstream(nc).consumers.get(stream, DURABLE),
      maxWaitMs: 1000,
    })
      .pipe(
        keyedDispatch({
          key: (m) => m.subject,
          handle: (m) => {
            handled++;
            if (drained.has(m.seq)) again.push(m.seq);
            return [];
          },
        }),
      )
      .subscribe();
    const allHandled = await within(10_000, () => handled === 40 - drained.size);
    // A lost acknowledgement would bring its message back after ack_wait (1 s).
    await within(1500, () => again.length > 0);
    sub.unsubscribe();

    expect(report.outcome).toBe('drained');
    expect(drained.size).toBe(8);
    expect(allHandled).toBe(true);
    expect(again).toEqual([]);
  }, 30_000);

  it('rejects invalid options, naming the option, the value and its type, and still takes the earlier onFailed names', async () => {
    const { stream } = await streamWithConsumer('options', 30_000);
    const consumer = await jetstream(nc).consumers.get(stream, DURABLE);
    expect(() => fromJetStream({ consumer, onFailed: 'drop' as never })).toThrow(
      "fromJetStream: expected `onFailed` to be 'redeliver', 'ack', 'term' or { redeliverAfterMs }, got 'drop' (string)",
    );
    expect(() => fromJetStream({ consumer, onFailed: { redeliverAfterMs: -1 } })).toThrow(
      'fromJetStream: expected `onFailed.redeliverAfterMs` to be an integer >= 0, got -1 (number)',
    );
    expect(() => fromJetStream({ consumer, closeTimeoutMs: 1.5 })).toThrow(
      'fromJetStream: expected `closeTimeoutMs` to be an integer from 0 to 2147483647, got 1.5 (number)',
    );
    expect(() => fromJetStream({ consumer, maxUnreachableMs: 1.5 })).toThrow(
      'fromJetStream: expected `maxUnreachableMs` to be an integer from 1 to 2147483647, got 1.5 (number)',
    );
    expect(() => fromJetStream({ consumer, onTransportError: null as never })).toThrow(
      'fromJetStream: expected `onTransportError` to be a function, got null',
    );
    // 0.x renames without aliases: the earlier names are refused like any unknown value.
    expect(() => fromJetStream({ consumer, onFailed: 'nak' as never })).toThrow(/expected `onFailed` to be/);
    expect(() => fromJetStream({ consumer, onFailed: { nakDelayMs: 100 } as never })).toThrow(
      /expected `onFailed` to be/,
    );
    expect(() => fromJetStream({ consumer, expiresMs: 5000 } as never)).toThrow(/unknown option `expiresMs`/);
  });
});
