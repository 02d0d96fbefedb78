/**
 * Account events over Redis Streams, partitioned by account: each account's events are applied one at
 * a time, in order, by whichever consumer process owns its stream; different accounts run in parallel.
 *
 *   scripts/brokers/redis.sh start
 *   npx ts-node --transpile-only examples/redis.ts          # one process owning all partitions
 *   npx ts-node --transpile-only examples/redis.ts 0 2      # consumer 0 of 2 (start 1 of 2 elsewhere)
 */
import Redis from 'ioredis';
import { keyedDispatch } from '../src';
import { fromRedisStreams, StreamPartitions } from '../src/redis';

interface AccountEvent {
  account: string;
  amountCents: number;
}

const partitions = new StreamPartitions('example:accounts', 8);
const [index = 0, consumers = 1] = process.argv.slice(2).map(Number);

async function main(): Promise<void> {
  const redis = new Redis({ host: '127.0.0.1', port: 6379 });

  // A producer: 2,000 events over 50 accounts, each written to its account's stream.
  for (let i = 0; i < 2000; i++) {
    const event: AccountEvent = { account: `acct-${i % 50}`, amountCents: (i % 7) * 100 - 300 };
    await partitions.publish(redis, event.account, JSON.stringify(event));
  }

  const balances = new Map<string, number>();
  let applied = 0;
  const subscription = fromRedisStreams({
    redis,
    streams: partitions.assigned(index, consumers),
    group: 'balances',
    consumer: `balances-${index}`,
  })
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
          return [];
        },
      }),
    )
    .subscribe({ error: (err) => console.error('stopped:', err) });

  // Report every second; stop on Ctrl-C (unfinished events stay pending and are recovered on restart).
  const report = setInterval(() => console.log(`applied ${applied}, accounts ${balances.size}`), 1000);
  process.once('SIGINT', () => {
    clearInterval(report);
    subscription.unsubscribe();
    void redis.quit();
  });
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
