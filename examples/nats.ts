/**
 * Device readings over NATS JetStream: each device's readings are handled one at a time, in order,
 * different devices in parallel; a reading whose handler fails is redelivered after a delay.
 * Needs NATS with JetStream on 127.0.0.1:4222 (`scripts/brokers/nats.sh start`).
 *
 *   npm run example -- nats            # publishes 1,000 readings, handles them, exits
 *   npm run example -- nats --forever  # then keeps consuming until Ctrl-C
 */
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { keyedDispatch, retryPolicy } from '../src';
import { fromJetStream } from '../src/nats';

const READINGS = 1000;
const FOREVER = process.argv.includes('--forever');

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

  // This run waits for the readings it publishes (stream sequence numbers).
  const waiting = new Set<number>();
  for (let i = 0; i < READINGS; i++) {
    const ack = await js.publish(
      `example.readings.device-${i % 20}`,
      JSON.stringify({ celsius: 18 + (i % 9) }),
    );
    waiting.add(ack.seq);
  }

  const last = new Map<string, number>();
  let handled = 0;
  let redelivered = 0;
  let allHandled = (): void => {};
  const done = new Promise<void>((resolve) => (allHandled = resolve));
  const receiver = fromJetStream({
    consumer: await js.consumers.get('EXAMPLE_READINGS', 'thermostat'),
    onFailed: { redeliverAfterMs: 2000 },
  });
  receiver
    .pipe(
      keyedDispatch({
        maxInFlight: 64,
        key: (m) => m.subject,
        handle: async (m) => {
          // Every 100th reading fails on its first delivery, standing in for a passing outage.
          if (m.seq % 100 === 0 && m.deliveryCount === 1) throw new Error(`device busy (reading ${m.seq})`);
          if (m.deliveryCount > 1) redelivered++;
          const { celsius } = m.msg.json<{ celsius: number }>();
          await new Promise((resolve) => setTimeout(resolve, 1)); // stands in for real work
          last.set(m.subject, celsius);
          handled++;
          if (waiting.delete(m.seq) && waiting.size === 0) allHandled();
          return [];
        },
        // A failed reading is settled `failed` and the stream goes on; `onFailed` redelivers it in 2 s.
        failurePolicy: retryPolicy({ maxAttempts: 1 }),
      }),
    )
    .subscribe({ error: (err) => console.error('stopped:', err) });

  const report = setInterval(() => console.log(`handled ${handled}, devices ${last.size}`), 1000);
  if (FOREVER) await new Promise((resolve) => process.once('SIGINT', resolve));
  else await done;
  clearInterval(report);
  // Lets running readings finish; acknowledgements are sent without waiting, so drain delivers them.
  await receiver.close();
  await nc.drain();
  console.log(`handled ${handled} readings of ${last.size} devices, ${redelivered} after a redelivery`);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
