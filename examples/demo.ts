// The main demo, on the embedded default (no broker): 200,000 messages over 10,000 keys sent through an
// in-process LocalBus into keyedDispatch, with async I/O-like handlers and live metrics, shown on the
// dashboard whose URL it prints; one account gets a burst it cannot keep up with, so the hot-key view
// shows its backlog. `npm start` keeps the dashboard up after the summary until Enter is pressed;
// `npm start -- --hold` keeps sending, round after round (`--port <n>` picks the port). Ctrl-C (SIGINT)
// or SIGTERM stops the sending, lets what is in flight finish, prints the summary and stops.
import { DispatchMetrics, KeyedExecutor, keyedDispatch, LocalBus, type MetricsSnapshot } from '../src';
import { serveDashboard } from '../src/dashboard';

interface OrderEvent {
  account: string;
  seq: number;
  sentAt: number;
}

const MESSAGES = 200_000;
const KEYS = 10_000;
/**
 * A burst on one account: of each round's first `HOT_BURST` messages, one in `HOT_EVERY` goes to
 * account-hot, faster than its store round trips finish one after another. Its backlog (beyond its share
 * of the window, parked) drains in a second or two while the other keys go on; 1,000 messages are too
 * few to move the p99 latency.
 */
const HOT_BURST = 10_000;
const HOT_EVERY = 10;
/** How often the live line is redrawn; without a terminal, one line is printed every `PRINT_EVERY_MS`. */
const DRAW_EVERY_MS = 200;
const PRINT_EVERY_MS = 2000;

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
    `dashboard                  ${dashboard.url}  ${HOLD ? '(Ctrl-C to stop)' : '(up until you press Enter after the run)'}`,
  );
  // Either signal stops the sending; what is in flight finishes and the summary is printed. A repeat is
  // ignored: `npm start` passes the terminal's Ctrl-C on, so one press can arrive twice.
  let stopping = false;
  let signalled: () => void = () => {};
  const stopSignal = new Promise<void>((resolve) => (signalled = resolve));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      stopping = true;
      signalled();
    });
  }

  const started = performance.now();
  const live = metrics.snapshots(DRAW_EVERY_MS).subscribe((s) => draw(handled, s, started));
  const nextSeq = new Map<string, number>();
  sending: do {
    for (let i = 0; i < MESSAGES; i++) {
      if (stopping) break sending;
      const account = i < HOT_BURST && i % HOT_EVERY === 0 ? 'account-hot' : `account-${i % KEYS}`;
      const seq = nextSeq.get(account) ?? 0;
      nextSeq.set(account, seq + 1);
      // Resolves once the message is queued for the dispatcher (at once while fewer than `maxPending`,
      // 1,024 by default, wait): a sender that awaits it is paced by the window beyond that.
      await bus.send({ account, seq, sentAt: performance.now() });
    }
  } while (HOLD);
  bus.close();
  await done;
  live.unsubscribe();
  const final = metrics.read();
  draw(handled, final, started, true);
  const seconds = (performance.now() - started) / 1000;
  const sorted = latencies.slice(0, Math.min(handled, MESSAGES)).sort();
  const pct = (p: number) =>
    sorted.length === 0 ? '–' : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))].toFixed(2);
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
  if (!stopping) {
    console.log(`\ndashboard                  ${dashboard.url}  still up: press Enter to stop it`);
    await Promise.race([enterPressed(), stopSignal]);
    process.stdin.destroy();
  }
  await dashboard.close();
  console.log('dashboard stopped');
}

/** Resolves on a line typed on stdin, or at its end (no terminal, `< /dev/null`), so nothing waits for nobody. */
function enterPressed(): Promise<void> {
  return new Promise((resolve) => {
    process.stdin
      .once('data', () => resolve())
      .once('end', () => resolve())
      .resume();
  });
}

let lastPrinted = Number.NEGATIVE_INFINITY;

/**
 * The live line: throughput, handler latency and the window, after the progress through the 200,000
 * messages of a single run; a held run has no end to progress towards, so it shows the time and count.
 */
function draw(handled: number, s: MetricsSnapshot, started: number, last = false): void {
  const elapsed = performance.now() - started;
  const hot = s.hotKeys.map((h) => `${String(h.key)}:${h.backlog}`).join(' ');
  const line =
    `${HOLD ? held(handled, elapsed) : progress(handled)}  ` +
    `${Math.round(s.settledPerSecond).toLocaleString('en-US').padStart(8)} msgs/s  ` +
    `handler p50 ${s.windowLatency.p50Ms.toFixed(1).padStart(4)} ms p99 ${s.windowLatency.p99Ms.toFixed(1).padStart(4)} ms  ` +
    `in flight ${String(s.inFlight).padStart(3)}/${s.maxInFlight}  hot ${hot}`;
  if (process.stdout.isTTY) {
    const width = process.stdout.columns - 1;
    process.stdout.write(`\r${line.slice(0, width).padEnd(width)}`);
  } else if (last || elapsed - lastPrinted >= PRINT_EVERY_MS) {
    lastPrinted = elapsed;
    console.log(line);
  }
}

function progress(handled: number): string {
  const width = 30;
  const filled = Math.round((handled / MESSAGES) * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${((handled / MESSAGES) * 100).toFixed(0).padStart(3)}%`;
}

function held(handled: number, elapsedMs: number): string {
  return `${(elapsedMs / 1000).toFixed(0).padStart(4)} s  ${handled.toLocaleString('en-US').padStart(11)} handled`;
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
