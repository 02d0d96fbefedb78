import { join } from 'node:path';
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { keyedDispatch, ThreadExecutor, threadHandler } from 'keyed-dispatch';
import { fromJetStream, type JetStreamMessage } from 'keyed-dispatch/nats';
import { lastValueFrom, toArray } from 'rxjs';
import { startBroker } from '../support/brokers';

const STREAM = `kd_threads_${process.pid}_${Date.now()}`;
const KEYS = 4;
const PER_KEY = 25;

interface Described {
  fields: string[];
  subject: string;
  n: number;
}
const describeMessage = threadHandler<JetStreamMessage, Described>(
  join(__dirname, 'thread-record-handler.js'),
  'describe',
);

let nc: Awaited<ReturnType<typeof connect>>;
beforeAll(async () => {
  startBroker('nats');
  nc = await connect({ servers: '127.0.0.1:4222' });
}, 60_000);
afterAll(async () => {
  await (await jetstreamManager(nc)).streams.delete(STREAM);
  await nc.close();
});

describe('fromJetStream feeding thread lanes', () => {
  it('hands each message to its thread as its own fields, the client’s message left behind, and acknowledges it', async () => {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: STREAM, subjects: [`${STREAM}.>`] });
    await jsm.consumers.add(STREAM, { durable_name: 'workers', ack_policy: AckPolicy.Explicit });
    const js = jetstream(nc);
    for (let n = 0; n < PER_KEY; n++) {
      await Promise.all(Array.from({ length: KEYS }, (_, k) => js.publish(`${STREAM}.k${k}`, String(n))));
    }
    const executor = new ThreadExecutor({ workers: 2 });
    const settled: string[] = [];
    let allSettled = () => {};
    const settling = new Promise<void>((resolve) => {
      allSettled = resolve;
    });
    const receiver = fromJetStream({
      consumer: await js.consumers.get(STREAM, 'workers'),
      onSettled: (_, outcome) => {
        if (settled.push(outcome) === KEYS * PER_KEY) allSettled();
      },
    });
    try {
      const output = lastValueFrom(
        receiver.pipe(
          keyedDispatch({ key: (m) => m.subject, handle: describeMessage, executor, failurePolicy: 'error' }),
          toArray(),
        ),
      );
      await settling;
      await receiver.close();
      const described = await output;
      expect([...new Set(described.map((d) => d.fields.join(',')))]).toEqual([
        'data,deliveryCount,headers,seq,subject',
      ]);
      const bySubject = new Map<string, number[]>();
      for (const d of described) bySubject.set(d.subject, [...(bySubject.get(d.subject) ?? []), d.n]);
      for (const [subject, ns] of bySubject)
        expect({ subject, ns }).toEqual({ subject, ns: ns.map((_, i) => i) });
      expect(settled.filter((s) => s !== 'done')).toEqual([]);
      expect((await jsm.consumers.info(STREAM, 'workers')).num_ack_pending).toBe(0);
    } finally {
      await receiver.close();
      await executor.close();
    }
  });
});
