/**
 * Device readings over NATS JetStream: each device's readings are handled one at a time, in order,
 * different devices in parallel; a reading whose handler fails is redelivered after a delay.
 *
 *   scripts/brokers/nats.sh start
 *   npx ts-node --transpile-only examples/nats.ts
 */
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { keyedDispatch } from '../src';
import { fromJetStream } from '../src/nats';

async function main(): Promise<void> {
  const nc = await connect({ servers: '127.0.0.1:4222' });
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);

  // The stream and its durable pull consumer (both are kept when they already exist).
  await jsm.streams.add({ name: 'EXAMPLE_READINGS', subjects: ['example.readings.>'] });
  await jsm.consumers.add('EXAMPLE_READINGS', {
    durable_name: 'thermostat',
    ack_policy: AckPolicy.Explicit,
    ack_wait: 30_000_000_000, // 30 s in nanoseconds: a dead process's readings come back after this
    max_deliver: 5,
  });

  for (let i = 0; i < 1000; i++) {
    await js.publish(`example.readings.device-${i % 20}`, JSON.stringify({ celsius: 18 + (i % 9) }));
  }

  const last = new Map<string, number>();
  let handled = 0;
  const subscription = fromJetStream({
    consumer: await js.consumers.get('EXAMPLE_READINGS', 'thermostat'),
    onFailed: { redeliverAfterMs: 2000 },
  })
    .pipe(
      keyedDispatch({
        maxInFlight: 64,
        key: (m) => m.subject,
        handle: async (m) => {
          const { celsius } = m.msg.json<{ celsius: number }>();
          await new Promise((resolve) => setTimeout(resolve, 1)); // stands in for real work
          last.set(m.subject, celsius);
          handled++;
          return [];
        },
      }),
    )
    .subscribe({ error: (err) => console.error('stopped:', err) });

  const report = setInterval(() => console.log(`handled ${handled}, devices ${last.size}`), 1000);
  process.once('SIGINT', () => {
    clearInterval(report);
    subscription.unsubscribe();
    // Acknowledgements are sent without waiting: drain delivers them before the connection closes.
    void nc.drain();
  });
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
