/**
 * Graceful shutdown: on SIGTERM (or Ctrl-C) the runtime stops taking messages in, lets what it
 * admitted finish within a deadline, and leaves the rest unacknowledged for redelivery.
 *
 *   npm run example -- graceful-shutdown          # sends itself SIGTERM after 1 s
 *   npm run example -- graceful-shutdown --wait   # waits for your Ctrl-C / kill
 */
import { DispatchRuntime, dispatchComponent, KeyedExecutor, LocalBus, retryPolicy } from '../src';

interface Deposit {
  account: string;
  amount: number;
  seq: number;
}

class VersionConflict extends Error {}

const deposits = new LocalBus<Deposit>();
const acknowledged: Deposit[] = [];
let failed = 0;
const balances = new Map<string, number>();

/** Applies a deposit after a simulated store write of 50–450 ms; every 25th write conflicts once. */
const conflicted = new Set<number>();
function applyDeposit(d: Deposit): Promise<string> {
  return new Promise((resolve, reject) => {
    setTimeout(
      () => {
        if (d.seq % 25 === 0 && !conflicted.has(d.seq)) {
          conflicted.add(d.seq);
          reject(new VersionConflict(`deposit ${d.seq}: version conflict`));
          return;
        }
        balances.set(d.account, (balances.get(d.account) ?? 0) + d.amount);
        resolve(`${d.account} +${d.amount}`);
      },
      50 + ((d.seq * 37) % 400),
    );
  });
}

const runtime = new DispatchRuntime({
  executor: new KeyedExecutor({ lanes: 2 }),
  components: [
    dispatchComponent({
      name: 'deposits',
      // Acknowledged only once the handler has finished: what is left is never acknowledged.
      source: deposits.receive({
        onSettled: (d, outcome) => (outcome === 'done' ? acknowledged.push(d) : failed++),
      }),
      dispatch: {
        key: (d: Deposit) => d.account,
        handle: applyDeposit,
        maxInFlight: 64,
        failurePolicy: retryPolicy<Deposit, string>({
          maxAttempts: 3,
          backoff: { initialMs: 100 },
          retryable: (err) => err instanceof VersionConflict,
          deadLetter: (d, err) => console.error(`dead letter: deposit ${d.seq}: ${String(err)}`),
        }),
      },
    }),
  ],
}).start();

// A producer that never stops: 200 deposits a second over 20 accounts.
let seq = 0;
const producer = setInterval(() => {
  for (let i = 0; i < 20; i++) {
    seq++;
    // Rejected once the runtime has stopped taking messages in: the producer would retry elsewhere.
    deposits.send({ account: `acct-${seq % 20}`, amount: 10, seq }).catch(() => undefined);
  }
}, 100);

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) {
    console.log(`${signal} again: forcing the stop`);
    await runtime.forceStop();
    return;
  }
  stopping = true;
  console.log(`${signal}: stopping intake, draining for at most 1 s ...`);
  clearInterval(producer);
  // Still in the bus, never delivered: intake closes as the stop begins, and the report lists them too.
  const undelivered = deposits.pending;
  const report = await runtime.stopGracefully({ timeoutMs: 1_000, drain: 'all' });
  const meaning = {
    drained: 'every admitted deposit finished in time',
    deadline: 'the 1 s deadline cut what had not finished',
    forced: 'forced by a second signal',
  };
  console.log(`stop outcome: ${report.outcome} (${meaning[report.outcome]})`);
  let cut = 0;
  for (const c of report.components) {
    const left = c.leftForRedelivery as Deposit[];
    cut += left.length;
    console.log(
      `  ${c.name}: ${c.state}; finished while stopping: ${c.drained} (failed ${c.failed}); ` +
        `left unacknowledged for redelivery: ${left.length}` +
        (left.length > 0
          ? ` (seq ${left
              .map((d) => d.seq)
              .sort((a, b) => a - b)
              .join(', ')})`
          : ''),
    );
  }
  console.log(
    `sent ${seq}: ${acknowledged.length} acknowledged, ${failed} failed, ${cut - undelivered} cut by the ` +
      `deadline (left unacknowledged), ${undelivered} never delivered (still in the bus when intake closed)`,
  );
  console.log(
    '  with a broker, the cut and the undelivered deposits would be delivered again to the next consumer; ' +
      'an in-process LocalBus keeps nothing once it closes, so the report lists both for the application',
  );
  console.log(`executor closed: ${runtime.executor.closed}`);
  deposits.close();
}

process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
if (!process.argv.includes('--wait')) setTimeout(() => process.kill(process.pid, 'SIGTERM'), 1_000);
