/**
 * Prices CPU-heavy orders on thread lanes: every account's orders are priced one at a time, in order,
 * while different accounts are priced in parallel on worker threads.
 *
 *   npm run example -- thread-pricing
 *
 * (Run from the sources, the library builds its thread worker on first use; the package ships it built.)
 */
import { join } from 'node:path';
import { lastValueFrom, tap } from 'rxjs';
import { fromIterable, keyedDispatch, ThreadExecutor, threadHandler } from '../src';
import type { Order } from './thread-pricing-handler.mjs';

/**
 * The handler module, in TypeScript, typed from its export: `Order` in, `Priced` out, checked by the
 * compiler (an export that returned something other than an ObservableInput would not compile).
 */
const price = threadHandler<typeof import('./thread-pricing-handler.mjs').price>(
  join(__dirname, 'thread-pricing-handler.mts'),
  'price',
);

function* orders(count: number): Generator<Order> {
  for (let i = 0; i < count; i++) {
    yield {
      account: `acct-${i % 12}`,
      seq: Math.floor(i / 12),
      sku: `sku-${(i * 7) % 31}`,
      quantity: 1 + (i % 5),
    };
  }
}

async function main(): Promise<void> {
  const executor = new ThreadExecutor({ workers: 2, maxRespawnsPerMinute: 3 });
  const lastSeq = new Map<string, number>();
  const started = performance.now();
  let priced = 0;
  let total = 0;
  try {
    await lastValueFrom(
      fromIterable(orders(600)).pipe(
        keyedDispatch({
          executor,
          key: (order: Order) => order.account,
          handle: price,
          maxInFlight: 64,
        }),
        tap((p) => {
          // Per-account order holds across threads: each account's sequence numbers arrive in order.
          if ((lastSeq.get(p.account) ?? -1) !== p.seq - 1)
            throw new Error(`out of order: ${p.account} #${p.seq}`);
          lastSeq.set(p.account, p.seq);
          priced++;
          total += p.cents;
        }),
      ),
    );
  } finally {
    await executor.close();
  }
  const ms = performance.now() - started;
  console.log(
    `priced ${priced} orders for ${lastSeq.size} accounts on ${executor.workers} threads in ${ms.toFixed(0)} ms`,
  );
  console.log(`total ${(total / 100).toFixed(2)}; every account's orders priced in sequence`);
}

void main();
