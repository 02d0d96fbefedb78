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
import { collect, median, minMax, rate, type Scenario, table } from '../lib';
import { barChart, saveChart } from '../svg';

/**
 * 1,000 keys of normal traffic plus one key that keeps failing: each of its messages conflicts on
 * the first attempt and succeeds on the retry 100 ms later (a version conflict). Measured: the other keys'
 * msgs/s — their message count over the time until the last of them finished — with and without the
 * failing key, for keyedDispatch (retry inside the key's mailbox) and for the Wow 9.2 shape in RxJS
 * (`groupBy(hash(key) % 128)` + `observeOn(asapScheduler)` + `concatMap` with the retry inside).
 */

const KEYS = 1_000;
const PER_KEY = 300;
/** The failing key gets a message every this many rounds of the others; each spends 100 ms in backoff. */
const FAILING_EVERY = 10;
const RUNS = 7;

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

/** First attempts of the failing key's messages, so each conflicts once and then succeeds. */
const attempted = new Set<number>();

/** The handler: an asynchronous store call (a resolved promise); the failing key conflicts once per message. */
function handle(m: Msg): Promise<Msg> {
  if (m.key === 'bad' && !attempted.has(m.seq)) {
    attempted.add(m.seq);
    return Promise.reject(new VersionConflict());
  }
  return Promise.resolve(m);
}

/** What one run measured: msgs/s of all other keys, and of the failing key's group-mates under hash % 128. */
interface Rates {
  others: number;
  mates: number;
}

/** Runs one contender; resolves once the whole stream has completed. */
type Contender = (messages: Msg[]) => Promise<Rates>;

const BAD_GROUP = hash('bad') % 128;
const isMate = (m: Msg) => m.key !== 'bad' && hash(m.key) % 128 === BAD_GROUP;

function measure(run: (onDone: (m: Msg) => void) => Observable<unknown>, messages: Msg[]): Promise<Rates> {
  const others = messages.filter((m) => m.key !== 'bad').length;
  const mates = messages.filter(isMate).length;
  return new Promise((resolve, reject) => {
    let done = 0;
    let matesDone = 0;
    let othersFinishedAt = 0;
    let matesFinishedAt = 0;
    const started = performance.now();
    run((m) => {
      if (m.key === 'bad') return;
      if (++done === others) othersFinishedAt = performance.now();
      if (isMate(m) && ++matesDone === mates) matesFinishedAt = performance.now();
    }).subscribe({
      error: reject,
      complete: () =>
        resolve({
          others: others / ((othersFinishedAt - started) / 1000),
          mates: mates / ((matesFinishedAt - started) / 1000),
        }),
    });
  });
}

const ours =
  (maxInFlight: number): Contender =>
  (messages) => {
    attempted.clear();
    const executor = new KeyedExecutor();
    return measure(
      (onDone) =>
        new Observable<Msg>((subscriber) =>
          fromIterable(messages)
            .pipe(
              keyedDispatch({
                executor,
                maxInFlight,
                key: (m: Msg) => m.key,
                handle,
                failurePolicy: retryPolicy<Msg, string>({
                  maxAttempts: 3,
                  backoff: { initialMs: 100, factor: 2, jitter: 0 },
                  retryable: (err) => err instanceof VersionConflict,
                }),
              }),
            )
            .subscribe({
              next: (m) => onDone(m),
              error: (e) => subscriber.error(e),
              complete: () => subscriber.complete(),
            }),
        ),
      messages,
    ).finally(() => executor.close());
  };

function hash(key: string): number {
  let h = 7;
  for (let i = 0; i < key.length; i++) h = (h * 31 + key.charCodeAt(i)) | 0;
  return h >>> 0;
}

/** A source emitting chunks of 1,000 with a macrotask between them (a burst is quadratic in observeOn). */
function paced(messages: Msg[]): Observable<Msg> {
  return new Observable<Msg>((subscriber) => {
    let i = 0;
    let timer: NodeJS.Immediate | undefined;
    const step = () => {
      const end = Math.min(messages.length, i + 1_000);
      for (; i < end; i++) subscriber.next(messages[i]);
      if (i < messages.length) timer = setImmediate(step);
      else subscriber.complete();
    };
    step();
    return () => clearImmediate(timer);
  });
}

const wow92: Contender = (messages) => {
  attempted.clear();
  return measure(
    (onDone) =>
      paced(messages).pipe(
        groupBy((m) => hash(m.key) % 128),
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
        mergeMap((m) => {
          onDone(m);
          return EMPTY;
        }),
      ),
    messages,
  );
};

const scenario: Scenario = {
  title: 'one key failing with 100 ms backoff among 1,000 flowing keys: the other keys’ throughput',
  async run(args) {
    const runs = Number(args[0] ?? RUNS);
    const contenders: Array<[string, string, Contender]> = [
      ['ours', 'keyedDispatch + retryPolicy, maxInFlight 256 (default)', ours(256)],
      ['ours-2048', 'keyedDispatch + retryPolicy, maxInFlight 2048', ours(2048)],
      ['wow92', 'Wow 9.2 shape: groupBy(hash % 128) + observeOn + concatMap, retry inside', wow92],
    ];
    const clean = traffic(false);
    const failing = traffic(true);
    const results = new Map<string, Rates[]>();
    for (const [id] of contenders) {
      results.set(`${id}:clean`, []);
      results.set(`${id}:failing`, []);
    }
    // Warm-up, then alternating runs so drift hits every configuration alike.
    for (const [, , run] of contenders) await run(clean);
    for (let r = 0; r < runs; r++) {
      for (const [id, , run] of contenders) {
        for (const [mode, messages] of [
          ['clean', clean],
          ['failing', failing],
        ] as const) {
          collect();
          results.get(`${id}:${mode}`)?.push(await run(messages));
        }
      }
    }
    const rows = contenders.map(([id, label]) => {
      const c = results.get(`${id}:clean`) ?? [];
      const f = results.get(`${id}:failing`) ?? [];
      const pick = (rs: Rates[], k: keyof Rates) => rs.map((x) => x[k]);
      // Each failing run is paired with the clean run just before it, so drift between runs cancels out.
      const kept = (k: keyof Rates) => {
        const ratios = f.map((x, i) => x[k] / c[i][k]);
        const [lo, hi] = minMax(ratios);
        return `${(median(ratios) * 100).toFixed(1)} % (${(lo * 100).toFixed(0)} – ${(hi * 100).toFixed(0)} %)`;
      };
      return [
        label,
        rate(median(pick(c, 'others'))),
        rate(median(pick(f, 'others'))),
        kept('others'),
        `${rate(median(pick(c, 'mates')))} → ${rate(median(pick(f, 'mates')))}`,
        kept('mates'),
      ];
    });
    const text =
      `${KEYS.toLocaleString('en-US')} keys × ${PER_KEY} messages (handler: a resolved promise), plus one key ` +
      `with a message every ${FAILING_EVERY} rounds (${Math.ceil(PER_KEY / FAILING_EVERY)} in all), each conflicting once ` +
      `and succeeding on the retry 100 ms later (3 attempts at most, backoff 100 ms doubling, no jitter). ` +
      `Rate = messages over the time until the last of them finished, for all ${(KEYS * PER_KEY).toLocaleString('en-US')} ` +
      `messages of the other keys, and for the failing key's group-mates (the ${new Set(clean.filter(isMate).map((m) => m.key)).size} ` +
      `other key(s) with the same hash % 128, ` +
      `the ones the 9.2 shape serializes with it). Rates are medians of ${runs} alternating runs in one process; ` +
      `"kept" is the median (min – max) of the ratio of each failing run to the clean run just before it. ` +
      `Target: keyedDispatch keeps ≥ 95 % of its no-failure rate.\n\n` +
      table(
        [
          'pattern',
          'others, no failing key',
          'others, with failing key',
          'others kept',
          'group-mates',
          'group-mates kept',
        ],
        rows,
      );
    console.log(`${text}\n`);
    const othersRate = (mode: string) =>
      contenders.map(([id]) => median((results.get(`${id}:${mode}`) ?? []).map((x) => x.others)));
    const chart = barChart({
      title: "Other keys' throughput, without and with one failing key (median)",
      categories: contenders.map(([, label]) =>
        label.startsWith('Wow')
          ? 'Wow 9.2 shape'
          : label.replace(' + retryPolicy,', ',').replace(' (default)', ''),
      ),
      series: [
        { name: 'no failing key', values: othersRate('clean') },
        { name: 'one key failing with 100 ms backoff', values: othersRate('failing') },
      ],
      yLabel: 'messages / s',
    });
    return `${saveChart('isolation-throughput', chart, "other keys' throughput")}\n\n${text}`;
  },
};

export default scenario;
