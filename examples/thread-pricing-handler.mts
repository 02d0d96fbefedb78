// Handler module of examples/thread-pricing.ts, loaded by each thread lane. TypeScript that Node runs as
// it is (Node 22.18 and later strip its types; `.mts`, an ES module whatever the package type): erasable
// syntax only, `import type` for types.
import { createHash } from 'node:crypto';

export interface Order {
  account: string;
  seq: number;
  sku: string;
  quantity: number;
}

export interface Priced {
  account: string;
  seq: number;
  cents: number;
  digest: string;
}

/** Prices an order: a deliberately CPU-heavy digest chain standing in for a real pricing model. */
export function price(order: Order): Priced[] {
  let digest = `${order.account}:${order.sku}:${order.quantity}`;
  for (let round = 0; round < 2000; round++) digest = createHash('sha256').update(digest).digest('hex');
  const cents = order.quantity * (100 + (Number.parseInt(digest.slice(0, 6), 16) % 900));
  return [{ account: order.account, seq: order.seq, cents, digest: digest.slice(0, 12) }];
}
