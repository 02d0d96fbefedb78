import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { DispatchStats, keyedDispatch, TransportUnreachableError } from 'keyed-dispatch';
import { fromJetStream, type JetStreamOptions } from 'keyed-dispatch/nats';
import { within } from '../kafka/broker';
import { OwnNats } from './support';

type Fault = Parameters<NonNullable<JetStreamOptions['onTransportError']>>[0];

/** A server of this spec's own, stopped and restarted under a running receiver. */
const server = new OwnNats(4232, 8232);
const text = new TextDecoder();

let nc: Awaited<ReturnType<typeof connect>>;

beforeEach(async () => {
  server.start();
  // The application's connection, reconnecting for as long as it takes.
  nc = await connect({
    servers: `127.0.0.1:${server.port}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 100,
  });
}, 30_000);

afterEach(async () => {
  await nc.close();
  server.stop();
  server.forget();
}, 30_000);

/** A stream `OUTAGE` on `outage.>` with one durable pull consumer, and the consumer. */
async function consumerOfStream() {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'OUTAGE', subjects: ['outage.>'] });
  await jsm.consumers.add('OUTAGE', { durable_name: 'workers', ack_policy: AckPolicy.Explicit });
  await jetstream(nc).publish('outage.k', 'before');
  return jetstream(nc).consumers.get('OUTAGE', 'workers');
}

/**
 * Publishes `data` once the connection and JetStream are back: a publish sent too early times out, and is
 * sent again with the same id, which JetStream takes once.
 */
async function publishOnceBack(data: string): Promise<void> {
  for (const until = Date.now() + 15_000; ; ) {
    try {
      await jetstream(nc).publish('outage.k', data, { msgID: data, timeout: 1000 });
      return;
    } catch (err) {
      if (Date.now() > until) throw err;
    }
  }
}

describe('fromJetStream while its server goes away', () => {
  it('reports the outage through onTransportError and goes on once the server is back', async () => {
    const consumer = await consumerOfStream();
    const faults: Fault[] = [];
    const handled: string[] = [];
    let outputError: unknown;
    const subscription = fromJetStream({
      consumer,
      maxWaitMs: 1000,
      onTransportError: (fault) => faults.push(fault),
    })
      .pipe(keyedDispatch({ key: (m) => m.subject, handle: (m) => [handled.push(text.decode(m.data))] }))
      .subscribe({ error: (err) => (outputError = err) });
    try {
      expect(await within(10_000, () => handled.length === 1)).toBe(true);
      server.stop();
      expect(await within(10_000, () => faults.length > 0)).toBe(true);
      server.start();
      await publishOnceBack('after');
      expect(await within(15_000, () => handled.length === 2)).toBe(true);

      expect(handled).toEqual(['before', 'after']);
      expect(outputError).toBeUndefined();
      expect(faults[0]).toMatchObject({ operation: 'fetch', receiver: 'fromJetStream()' });
    } finally {
      subscription.unsubscribe();
    }
  }, 60_000);

  it('errors the output with a TransportUnreachableError once a server that went without a word has been unreachable for longer than maxUnreachableMs', async () => {
    const consumer = await consumerOfStream();
    const faults: Fault[] = [];
    let handled = 0;
    let outputError: unknown;
    const stats = new DispatchStats();
    const subscription = fromJetStream({
      consumer,
      maxWaitMs: 1000,
      maxUnreachableMs: 1000,
      onTransportError: (fault) => faults.push(fault),
    })
      .pipe(keyedDispatch({ stats, key: (m) => m.subject, handle: () => [handled++] }))
      .subscribe({ error: (err) => (outputError = err) });
    try {
      expect(await within(10_000, () => handled === 1)).toBe(true);
      const stoppedAt = Date.now();
      // Killed: no shutdown notice ends the fetch under way; the client holds it open and says nothing.
      await server.kill();
      expect(await within(15_000, () => outputError !== undefined)).toBe(true);

      expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(1000);
      expect(outputError).toBeInstanceOf(TransportUnreachableError);
      expect(String((outputError as Error).message)).toContain('fromJetStream()');
      expect(faults.length).toBeGreaterThan(0);
      // Each one counted in the dispatcher's stats too.
      const counted = Object.values(stats.snapshot().transportFaults).reduce((sum, n) => sum + n, 0);
      expect(counted).toBe(faults.length);
    } finally {
      subscription.unsubscribe();
    }
  }, 60_000);
});
