import {
  asapScheduler,
  catchError,
  concatMap,
  defer,
  EMPTY,
  groupBy,
  mergeMap,
  Observable,
  observeOn,
  retry,
  timer,
} from 'rxjs';
import { fromIterable, KeyedExecutor, keyedDispatch, retryPolicy } from '../../src';
import { inFreshProcess, type Run, ratios, series } from '../harness';
import type { Report, Scenario } from '../report';
import { median, rate, ratioCell, table, times } from '../stats';

/**
 * One key failing among 1,000 flowing keys: each of its messages conflicts once and succeeds on the retry
 * 100 ms later. How much of their throughput do the other keys keep? keyedDispatch retries inside the
 * key's mailbox; the usual RxJS alternative partitions keys into a fixed set of serial groups
 * (`groupBy(hash(key) % 128)` + `concatMap`) and retries inside the group.
 */

const KEYS = 1_000;
const PER_KEY = 300;
/** The failing key gets a message every this many rounds of the others. */
const FAILING_EVERY = 10;
const GROUPS = 128;

const LABELS: Record<string, string> = {
  ours: 'keyedDispatch + `retryPolicy` (3 attempts, 100 ms doubling)',
  hashed: `\`groupBy(hash(key) % ${GROUPS})\` + \`observeOn\` + \`concatMap\`, \`retry\` inside`,
};

interface Msg {
  key: string;
  seq: number;
}

class VersionConflict extends Error {}

function traffic(withFailingKey: boolean): Msg[] {
  const messages: Msg[] = [];
  for (let seq = 0; seq < PER_KEY; seq++) {
    if (withFailingKey && seq % FAILING_EVERY === 0) messages.push({ key: 'bad', seq });
    for (let k = 0; k < KEYS; k++) messages.push({ key: `k${k}`, seq });
  }
  return messages;
}

/** The failing key's messages already tried once: each conflicts once, then succeeds. */
const attempted = new Set<number>();

function handle(m: Msg): Promise<Msg> {
  if (m.key === 'bad' && !attempted.has(m.seq)) {
    attempted.add(m.seq);
    return Promise.reject(new VersionConflict());
  }
  return Promise.resolve(m);
}

function hash(key: string): number {
  let h = 7;
  for (let i = 0; i < key.length; i++) h = (h * 31 + key.charCodeAt(i)) | 0;
  return h >>> 0;
}

/** The other keys' msgs/s: their count over the time until the last of them finished. */
function othersRate(output: Observable<Msg>, messages: Msg[]): Promise<number> {
  const others = messages.filter((m) => m.key !== 'bad').length;
  attempted.clear();
  return new Promise((resolve, reject) => {
    let done = 0;
    let seconds = 0;
    const started = performance.now();
    output.subscribe({
      next: (m) => {
        if (m.key !== 'bad' && ++done === others) seconds = (performance.now() - started) / 1000;
      },
      error: reject,
      // The failing key's last retry ends after the others: the next run starts once it has.
      complete: () => resolve(others / seconds),
    });
  });
}

/** Chunks of 1,000 with a macrotask between them (a single burst makes `observeOn` quadratic). */
function paced(messages: Msg[]): Observable<Msg> {
  return new Observable<Msg>((subscriber) => {
    let i = 0;
    let next: NodeJS.Immediate | undefined;
    const step = () => {
      for (const end = Math.min(messages.length, i + 1_000); i < end; i++) subscriber.next(messages[i]);
      if (i < messages.length) next = setImmediate(step);
      else subscriber.complete();
    };
    step();
    return () => clearImmediate(next);
  });
}

const contenders = (executor: KeyedExecutor): Record<string, (messages: Msg[]) => Observable<Msg>> => ({
  ours: (messages) =>
    fromIterable(messages).pipe(
      keyedDispatch({
        executor,
        key: (m: Msg) => m.key,
        handle,
        failurePolicy: retryPolicy<Msg, string>({
          maxAttempts: 3,
          backoff: { initialMs: 100, factor: 2, jitter: 0 },
          retryable: (err) => err instanceof VersionConflict,
        }),
      }),
    ),
  hashed: (messages) =>
    paced(messages).pipe(
      groupBy((m) => hash(m.key) % GROUPS),
      mergeMap((group) =>
        group.pipe(
          observeOn(asapScheduler),
          concatMap((m) =>
            defer(() => handle(m)).pipe(
              retry({ count: 2, delay: (_err, n) => timer(100 * 2 ** (n - 1)) }),
              catchError(() => EMPTY),
            ),
          ),
        ),
      ),
    ),
});

/** The cell: each contender without and with the failing key, in one process. */
export function cell(): Record<string, Run> {
  const inputs = { clean: traffic(false), failing: traffic(true) };
  return Object.fromEntries(
    Object.entries(contenders(new KeyedExecutor())).flatMap(([id, make]) =>
      (['clean', 'failing'] as const).map((mode) => [
        `${id}:${mode}`,
        async () => ({ rate: await othersRate(make(inputs[mode]), inputs[mode]) }),
      ]),
    ),
  );
}

async function run({ rounds = 7 }: { rounds?: number }): Promise<Report> {
  const rs = inFreshProcess('scenarios/isolation', { warmups: 1, rounds });
  const kept = (id: string) => ratios(rs, `${id}:failing`, `${id}:clean`);
  const rows = Object.entries(LABELS).map(([id, label]) => [
    label,
    rate(median(series(rs, `${id}:clean`))),
    rate(median(series(rs, `${id}:failing`))),
    ratioCell(kept(id)),
  ]);
  return {
    method: `${KEYS.toLocaleString('en-US')} keys × ${PER_KEY} messages, the handler a resolved promise; with the failing key, one more key gets a message every ${FAILING_EVERY} rounds of the others, each failing once and succeeding on the retry 100 ms later. Rate: the other keys' ${(KEYS * PER_KEY).toLocaleString('en-US')} messages over the time until the last of them finished. One process; each contender runs without and with the failing key in every round (${rounds} rounds, the order rotated); kept is the median of per-round ratios, with ÷ without (min–max). With ${GROUPS} serial groups, the keys that share the failing key's group wait out each of its backoffs, and a group's \`concatMap\` serializes all its keys.`,
    tables: table(['contender', 'others, msgs/s, no failing key', 'with the failing key', 'kept'], rows),
    figures: { 'ours.kept': times(median(kept('ours'))), 'hashed.kept': times(median(kept('hashed'))) },
    chart: {
      title: "Other keys' throughput without and with one failing key (median msgs/s)",
      categories: ['keyedDispatch', `groupBy(hash % ${GROUPS}) + concatMap`],
      series: ['clean', 'failing'].map((mode) => ({
        name: mode === 'clean' ? 'no failing key' : 'one key failing, 100 ms backoff',
        values: Object.keys(LABELS).map((id) => median(series(rs, `${id}:${mode}`))),
      })),
      yLabel: 'messages / s',
    },
    headline: [
      [
        'one key failing with 100 ms backoffs among 1,000: the share of their throughput the other keys keep',
        `**{ours.kept}** against **{hashed.kept}** with RxJS \`groupBy(hash % ${GROUPS})\` + \`concatMap\``,
        '—',
      ],
    ],
  };
}

const scenario: Scenario = {
  title: 'one key failing with 100 ms backoffs among 1,000 flowing keys: the other keys’ throughput',
  run,
};

export default scenario;
