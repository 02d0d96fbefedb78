import { AckPolicy, type JetStreamManager, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { DispatchStats, keyedDispatch } from 'keyed-dispatch';
import { fromJetStream, type JetStreamMessage } from 'keyed-dispatch/nats';
import { DispatchRuntime, dispatchComponent } from 'keyed-dispatch/runtime';
import { lastValueFrom } from 'rxjs';
import { within } from '../kafka/broker';
import { startBroker } from '../support/brokers';
import { deferred } from '../support/waits';

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

const created: string[] = [];
afterAll(async () => {
  for (const stream of created) await jsm.streams.delete(stream);
  await nc.close();
});

type Dispatch = Parameters<typeof keyedDispatch<JetStreamMessage, string, void>>[0];
type Receiver = ReturnType<typeof fromJetStream>;

/** Ways to run a dispatcher on a receiver; each returns the function that stops it. */
const RUNS = [
  {
    name: 'keyedDispatch',
    run: (receiver: Receiver, dispatch: Dispatch) => {
      const output = lastValueFrom(receiver.pipe(keyedDispatch(dispatch)), { defaultValue: undefined });
      return async () => {
        await receiver.close();
        await output;
      };
    },
  },
  {
    name: 'a DispatchRuntime component',
    run: (receiver: Receiver, dispatch: Dispatch) => {
      const runtime = new DispatchRuntime({
        components: [dispatchComponent({ name: 'lagging', source: receiver, dispatch })],
      }).start();
      return async () => {
        await runtime.stopGracefully({ drain: 'all' });
      };
    },
  },
];

describe.each(RUNS)('fromJetStream lag under $name', ({ run }) => {
  it("reads the consumer's messages not finished — not yet delivered plus unacknowledged — and its acknowledgement floor, within lagIntervalMs", async () => {
    const stream = `${RUN}_${created.length}`;
    created.push(stream);
    await jsm.streams.add({ name: stream, subjects: [`${stream}.>`] });
    await jsm.consumers.add(stream, { durable_name: DURABLE, ack_policy: AckPolicy.Explicit });
    const js = jetstream(nc);
    for (let n = 0; n < 20; n++) await js.publish(`${stream}.k`, String(n));
    const stats = new DispatchStats();
    const gate = deferred();
    const receiver = fromJetStream({
      consumer: await js.consumers.get(stream, DURABLE),
      maxWaitMs: 1000,
      lagIntervalMs: 50,
    });
    const stop = run(receiver, {
      key: (m: JetStreamMessage) => m.subject,
      // A window smaller than the stream: some messages stay undelivered, the others unacknowledged.
      maxInFlight: 8,
      stats,
      handle: async (m) => {
        // Messages from the 5th on wait.
        if (Number(text.decode(m.data)) >= 4) await gate.promise;
      },
    });
    const lag = () => stats.snapshot().transportLag;
    try {
      expect(await within(10_000, () => lag()[0]?.committed === '4')).toBe(true);
      expect(lag()).toEqual([
        {
          transport: 'jetstream',
          source: stream,
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
      await stop();
    }
  });
});
