/**
 * Account events over Redis Streams, partitioned by account: each account's events are applied one at
 * a time, in order, by whichever consumer process owns its stream; different accounts run in parallel.
 * Needs Redis on 127.0.0.1:6379 (`scripts/brokers/redis.sh start`).
 *
 *   npm run example -- redis                # publishes 2,000 events, applies them, exits
 *   npm run example -- redis --forever      # then keeps consuming until Ctrl-C
 *   npm run example -- redis 0 2 --forever  # consumer 0 of 2 (start 1 of 2 elsewhere)
 */
import { Redis } from 'ioredis';
import { keyedDispatch, retryPolicy } from '../src';
import { fromRedisStreams, StreamPartitions } from '../src/redis';

interface AccountEvent {
  account: string;
  amountCents: number;
}

const EVENTS = 2000;
const partitions = new StreamPartitions('example:accounts', 8);
const FOREVER = process.argv.includes('--forever');
const [index = 0, consumers = 1] = process.argv
  .slice(2)
  .filter((arg) => !arg.startsWith('--'))
  .map(Number);

async function main(): Promise<void> {
  const redis = new Redis({ host: '127.0.0.1', port: 6379 });
  const mine = partitions.assigned(index, consumers);

  // A producer: 2,000 events over 50 accounts, each written to its account's stream. This run waits
  // for the ones written to this consumer's streams.
  const waiting = new Set<string>();
  for (let i = 0; i < EVENTS; i++) {
    const event: AccountEvent = { account: `acct-${i % 50}`, amountCents: (i % 7) * 100 - 300 };
    const stream = partitions.streamFor(event.account);
    const id = await partitions.publish(redis, event.account, JSON.stringify(event));
    if (mine.includes(stream)) waiting.add(`${stream} ${id}`);
  }

  const balances = new Map<string, number>();
  let applied = 0;
  let allApplied = (): void => {};
  const done = new Promise<void>((resolve) => (allApplied = resolve));
  if (waiting.size === 0) allApplied();
  const receiver = fromRedisStreams({
    redis,
    streams: mine,
    group: 'balances',
    consumerName: `balances-${index}`,
    // Entries an earlier run left pending (killed mid-way) come back after 5 s instead of the default 30 s.
    claimMinIdleMs: 5000,
  });
  receiver
    .pipe(
      keyedDispatch({
        maxInFlight: 128,
        key: (m) => m.key,
        handle: async (m) => {
          const event = JSON.parse(m.data) as AccountEvent;
          // Stands in for a database write: the account's next event waits for it.
          await new Promise((resolve) => setTimeout(resolve, 1));
          balances.set(event.account, (balances.get(event.account) ?? 0) + event.amountCents);
          applied++;
          if (waiting.delete(`${m.stream} ${m.id}`) && waiting.size === 0) allApplied();
          return [];
        },
        // Retried 5 times in its account's mailbox, then left pending; left out, retried until it succeeds.
        failurePolicy: retryPolicy({ maxAttempts: 5 }),
      }),
    )
    .subscribe({ error: (err) => console.error('stopped:', err) });

  const report = setInterval(() => console.log(`applied ${applied}, accounts ${balances.size}`), 1000);
  if (FOREVER) await new Promise((resolve) => process.once('SIGINT', resolve));
  else await done;
  clearInterval(report);
  // Lets running events finish and acknowledges them; what has not started stays pending for the next run.
  await receiver.close();
  await redis.quit();
  console.log(`applied ${applied} events over ${balances.size} accounts, streams ${mine.join(', ')}`);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
