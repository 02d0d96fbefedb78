// A process serving two dashboards for the HTTP fuzz spec (one open, one with a token), so that a request
// that kills its server shows as this process exiting. Sends `{ ports: [open, guarded] }` once listening.
import { DispatchMetrics } from '../../src';
import { serveDashboard } from '../../src/dashboard';
import { gated } from './gated';

async function main(): Promise<void> {
  const metrics = new DispatchMetrics();
  // Keys of every kind, a key with no text form among them, so /metrics and the live feed have work to do.
  gated(metrics, ['a', 'a', 42, Object.create(null), 'say "hi"\n']);
  const open = await serveDashboard({ sources: { orders: metrics }, periodMs: 100 });
  const guarded = await serveDashboard({ sources: { orders: metrics }, periodMs: 100, token: 't' });
  process.send?.({ ports: [open, guarded].map((d) => Number(new URL(d.url).port)) });
}

void main();
