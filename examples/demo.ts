// The main demo, on the embedded default (no broker): 200,000 messages over 10,000 keys sent through an
// in-process LocalBus into keyedDispatch, with async I/O-like handlers and live metrics, shown on the
// dashboard whose URL it prints. `npm start`; `npm start -- --hold` keeps sending, round after round,
// until Ctrl-C, so the dashboard can be watched (`--port <n>` picks its port).
import { DispatchMetrics, KeyedExecutor, keyedDispatch, LocalBus, type MetricsSnapshot } from '../src';
import { serveDashboard } from '../src/dashboard';

interface OrderEvent {
  account: string;
  seq: number;
  sentAt: number;
}

const MESSAGES = 200_000;
const KEYS = 10_000;
/** One message in this many goes to a single busy account, so the hot-key view has something to show. */
const HOT_EVERY = 250;

const HOLD = process.argv.includes('--hold');
const PORT = process.argv.includes('--port') ? Number(process.argv[process.argv.indexOf('--port') + 1]) : 0;

/** Simulated I/O: a store round trip of 0–2 ms that holds no lane while it waits. */
function saveToStore(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * 2));
}

async function main(): Promise<void> {
  const executor = KeyedExecutor.shared;
  const bus = new LocalBus<OrderEvent>();
  const metrics = new DispatchMetrics({ hotKeys: 3 });
  const lastSeq = new Map<string, number>();
  const latencies = new Float64Array(MESSAGES);
  let handled = 0;
  let orderViolations = 0;

  const done = new Promise<void>((resolve, reject) => {
    bus
      .receive()
      .pipe(
        keyedDispatch({
          executor,
          stats: metrics,
          key: (e: OrderEvent) => e.account,
          handle: async (e: OrderEvent) => {
            if ((lastSeq.get(e.account) ?? -1) !== e.seq - 1) orderViolations++;
            lastSeq.set(e.account, e.seq);
            await saveToStore();
            // The last MESSAGES latencies (all of them in a single round).
            latencies[handled++ % MESSAGES] = performance.now() - e.sentAt;
          },
        }),
      )
      .subscribe({ error: reject, complete: resolve });
  });

  const dashboard = await serveDashboard({ sources: { orders: metrics }, port: PORT });
  console.log(
    `dashboard                  ${dashboard.url}  ${HOLD ? '(Ctrl-C to stop)' : '(npm start -- --hold keeps it up)'}`,
  );
  let stopping = false;
  // The first Ctrl-C ends the round under way and prints the summary; a second one exits at once.
  if (HOLD) process.once('SIGINT', () => (stopping = true));

  const started = performance.now();
  const live = metrics.snapshots(200).subscribe((s) => draw(handled, s));
  const nextSeq = new Map<string, number>();
  do {
    for (let i = 0; i < MESSAGES; i++) {
      const account = i % HOT_EVERY === 0 ? 'account-hot' : `account-${i % KEYS}`;
      const seq = nextSeq.get(account) ?? 0;
      nextSeq.set(account, seq + 1);
      // Resolves once the message is queued for the dispatcher (at once while fewer than `maxPending`,
      // 1,024 by default, wait): a sender that awaits it is paced by the window beyond that.
      await bus.send({ account, seq, sentAt: performance.now() });
    }
  } while (HOLD && !stopping);
  bus.close();
  await done;
  live.unsubscribe();
  const final = metrics.read();
  draw(handled, final);
  await dashboard.close();
  const seconds = (performance.now() - started) / 1000;
  const sorted = latencies.slice(0, Math.min(handled, MESSAGES)).sort();
  const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))].toFixed(2);
  process.stdout.write('\n\n');
  console.log(
    `messages handled           ${handled.toLocaleString('en-US')} over ${KEYS.toLocaleString('en-US')} keys`,
  );
  console.log(`throughput                 ${Math.round(handled / seconds).toLocaleString('en-US')} msgs/s`);
  console.log(`latency send → handled     p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms`);
  console.log(
    `handler duration           p50 ${final.latency.p50Ms.toFixed(2)} ms, p99 ${final.latency.p99Ms.toFixed(2)} ms (sampled)`,
  );
  console.log(`max in-flight seen         ${final.maxInFlightSeen} (window ${final.maxInFlight})`);
  console.log(`per-key order violations   ${orderViolations}`);
  console.log(`live mailboxes at end      ${final.liveMailboxes} (executor: ${executor.liveMailboxes})`);
}

/** Last tenth printed when stdout is not a terminal (one line per 10 % instead of a live bar). */
let printedTenth = -1;

function draw(handled: number, s: MetricsSnapshot): void {
  const width = 30;
  // Progress through the current round.
  const done = handled === 0 ? 0 : ((handled - 1) % MESSAGES) + 1;
  const filled = Math.round((done / MESSAGES) * width);
  const hot = s.hotKeys.map((h) => `${String(h.key)}:${h.backlog}`).join(' ');
  const line =
    `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${((done / MESSAGES) * 100).toFixed(0).padStart(3)}% ` +
    `${Math.round(s.settledPerSecond).toLocaleString('en-US').padStart(8)} msg/s  ` +
    `in-flight ${String(s.inFlight).padStart(3)}/${s.maxInFlight}  ` +
    `p99 ${s.windowLatency.p99Ms.toFixed(1).padStart(4)} ms  hot ${hot}`;
  if (process.stdout.isTTY) process.stdout.write(`\r${line.padEnd(process.stdout.columns - 1)}`);
  else if (Math.floor((handled / MESSAGES) * 10) > printedTenth) {
    printedTenth = Math.floor((handled / MESSAGES) * 10);
    console.log(line);
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
