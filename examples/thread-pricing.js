// Handler module of examples/thread-pricing.ts, loaded by each thread lane. Plain JS: Node runs no
// TypeScript in a worker thread.
const { createHash } = require('node:crypto');

/** Prices an order: a deliberately CPU-heavy digest chain standing in for a real pricing model. */
exports.price = (order) => {
  let digest = `${order.account}:${order.sku}:${order.quantity}`;
  for (let round = 0; round < 2000; round++) digest = createHash('sha256').update(digest).digest('hex');
  const cents = order.quantity * (100 + (Number.parseInt(digest.slice(0, 6), 16) % 900));
  return [{ account: order.account, seq: order.seq, cents, digest: digest.slice(0, 12) }];
};
