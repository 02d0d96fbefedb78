import { AckPolicy, type JetStreamManager, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { DispatchStats, keyedDispatch } from 'keyed-dispatch';
import { fromJetStream, type JetStreamMessage } from 'keyed-dispatch/nats';
import { lastValueFrom } from 'rxjs';
import { within } from '../kafka/broker';
import { startBroker } from '../support/brokers';
import { deferred } from '../support/scripted-receiver';

/** Stream and subject names unique to this run, so reruns start clean. */
const RUN = `kd_spec_lag_${process.pid}_${Date.now()}`;
const DURABLE = 'workers';
const text = new TextDecoder();

let nc: Awaited<ReturnType<typeof connect>>;
let jsm: JetStreamManager;

beforeAll(async () => {
  startBroker('nats');
  nc = await connect({ servers: '127.0.0.1:4222' });
  jsm = await jetstreamManager(nc);
});

afterAll(async () => {
  await jsm.streams.delete(RUN);
  await nc.close();
});

describe('fromJetStream lag', () => {
  it("reads the consumer's messages not finished — not yet delivered plus unacknowledged — and its acknowledgement floor, within lagIntervalMs", async () => {
    await jsm.streams.add({ name: RUN, subjects: [`${RUN}.>`] });
    await jsm.consumers.add(RUN, { durable_name: DURABLE, ack_policy: AckPolicy.Explicit });
    const js = jetstream(nc);
    for (let n = 0; n < 20; n++) await js.publish(`${RUN}.k`, String(n));
    const stats = new DispatchStats();
    const gate = deferred();
    const receiver = fromJetStream({
      consumer: await js.consumers.get(RUN, DURABLE),
      maxWaitMs: 1000,
      lagIntervalMs: 50,
    });
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch({
          key: (m: JetStreamMessage) => m.subject,
          // A window smaller than the stream: some messages stay undelivered, the others unacknowledged.
          maxInFlight: 8,
          stats,
          handle: async (m) => {
            // Messages from the 5th on wait.
            if (Number(text.decode(m.data)) >= 4) await gate.promise;
          },
        }),
      ),
      { defaultValue: undefined },
    );
    const lag = () => stats.snapshot().transportLag;
    try {
      expect(await within(10_000, () => lag()[0]?.committed === '4')).toBe(true);
      expect(lag()).toEqual([
        {
          transport: 'jetstream',
          source: RUN,
          partition: null,
          consumer: DURABLE,
          lag: 16,
          committed: '4',
          at: expect.any(Number),
        },
      ]);

      gate.resolve();
      expect(await within(10_000, () => lag()[0]?.lag === 0)).toBe(true);
      expect(lag()[0].committed).toBe('20');
    } finally {
      gate.resolve();
      await receiver.close();
      await output;
    }
  });
});
