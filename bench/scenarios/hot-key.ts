import { concatMap, groupBy, mergeMap, Subject } from 'rxjs';
import { KeyedExecutor, keyedDispatch } from '../../src';
import { inFreshProcess, type Measures, type Rounds, type Run, ratios, series } from '../harness';
import { openLoopChain, paceArrivals, percentile, random, ScheduleReceiver } from '../open-loop';
import type { Report, Scenario } from '../report';
import { median, percent, rate, ratioCell, table, times } from '../stats';

/**
 * One key carrying half the traffic, more than it can handle: do the other (cold) keys' messages still
 * finish, and how late? An open-loop source offers messages on schedule whatever the consumer does.
 */

interface Message {
  readonly key: number;
  /** Index in the schedule; also picks the handler's kind. */
  readonly seq: number;
}

const KEYS = 1_000;
/** The hot key; every other key is cold. */
const HOT = 0;
const ARRIVAL_MS = 500;
/** After the last arrival, how long a run waits for the cold messages to finish. */
const DRAIN_MS = 2_000;
const WINDOW = 256;
/** The offered rate, or 60 % of keyedDispatch's closed-loop maximum where that is lower. */
const TARGET_RATE = 160_000;

const LABELS: Record<string, string> = {
  share: 'keyedDispatch, defaults (`maxPerKey` 64, `maxParked` 65,536)',
  shallow: 'keyedDispatch, `maxParked` 256',
  shared: 'keyedDispatch, no per-key share (`maxPerKey` = `maxParked` = 256)',
  chain: 'per-key promise chain, 256 unfinished',
  groupBy: '`groupBy(key)` + `concatMap` (unbounded)',
};

/** Half the messages wait one event-loop turn, a quarter `setTimeout(0)`, a quarter `setTimeout(1)`. */
function handle(m: Message): Promise<Message> {
  return new Promise((resolve) => {
    const kind = m.seq & 3;
    if (kind < 2) setImmediate(resolve, m);
    else setTimeout(resolve, kind - 2, m);
  });
}
const keyOf = (m: Message) => m.key;

/** A contender on one schedule: told how many messages have arrived, stopped at the end. */
interface Running {
  arrive(count: number): void;
  stop(): void;
  /** Messages taken from the source so far. */
  taken(): number;
}
type Contender = (input: readonly Message[], done: (m: Message) => void) => Running;

function dispatch(executor: KeyedExecutor, options: { maxPerKey?: number; maxParked?: number }): Contender {
  return (input, done) => {
    const receiver = new ScheduleReceiver<Message>(input);
    const subscription = receiver
      .pipe(keyedDispatch({ executor, key: keyOf, handle, maxInFlight: WINDOW, ...options }))
      .subscribe(done);
    return {
      arrive: (count) => receiver.session?.arrive(count),
      stop: () => subscription.unsubscribe(),
      taken: () => receiver.session?.taken ?? 0,
    };
  };
}

function contenders(): Record<string, Contender> {
  const executor = new KeyedExecutor();
  return {
    share: dispatch(executor, {}),
    shallow: dispatch(executor, { maxParked: WINDOW }),
    shared: dispatch(executor, { maxPerKey: WINDOW, maxParked: WINDOW }),
    chain: (input, done) => openLoopChain(input, keyOf, handle, done, WINDOW),
    groupBy(input, done) {
      const subject = new Subject<Message>();
      const subscription = subject
        .pipe(
          groupBy(keyOf),
          mergeMap((g) => g.pipe(concatMap(handle))),
        )
        .subscribe(done);
      let taken = 0;
      return {
        arrive: (count) => {
          while (taken < count) subject.next(input[taken++]);
        },
        stop: () => subscription.unsubscribe(),
        taken: () => taken,
      };
    },
  };
}

/** Message i arrives at i / perMs ms (all at once for Infinity); with `hot`, half go to the hot key. */
function schedule(count: number, hot: boolean, seed: number): Message[] {
  const next = random(seed);
  return Array.from({ length: count }, (_, seq) => ({
    seq,
    key: hot ? (next() < 0.5 ? HOT : 1 + Math.floor(next() * (KEYS - 1))) : Math.floor(next() * KEYS),
  }));
}

/**
 * Runs a contender over a schedule; a message's latency runs from its scheduled arrival to its end, so
 * waiting in the source counts. Ends when every cold message (with `all`, every message) finished, or
 * `DRAIN_MS` after the last arrival.
 */
function runOnce(contender: Contender, input: Message[], perMs: number, all = false): Promise<Measures> {
  const finishedAt = new Float64Array(input.length).fill(Number.NaN);
  const cold = input.filter((m) => m.key !== HOT).length;
  return new Promise((resolve) => {
    let arrived = 0;
    let coldLeft = cold;
    let finished = 0;
    let peakHeld = 0;
    let ended = false;
    const start = performance.now();
    const complete = () => arrived === input.length && (all ? finished === input.length : coldLeft === 0);
    const running = contender(input, (m) => {
      if (ended) return;
      finishedAt[m.seq] = performance.now() - start;
      finished++;
      if (m.key !== HOT) coldLeft--;
      if (complete()) end();
    });
    const sampler = setInterval(() => (peakHeld = Math.max(peakHeld, running.taken() - finished)), 5);
    const deadline = setTimeout(end, all ? 60_000 : (input.length - 1) / perMs + DRAIN_MS);
    function end(): void {
      if (ended) return;
      ended = true;
      const ms = performance.now() - start;
      clearInterval(sampler);
      clearTimeout(deadline);
      running.stop();
      const latencies = Float64Array.from(
        input.filter((m) => m.key !== HOT),
        (m) =>
          Number.isNaN(finishedAt[m.seq]) ? Number.POSITIVE_INFINITY : finishedAt[m.seq] - m.seq / perMs,
      ).sort();
      const measures = {
        rate: (finished * 1000) / ms,
        coldP99: percentile(latencies, 99),
        coldFinished: 1 - coldLeft / cold,
        peakHeld,
        offered: perMs * 1000,
      };
      // Handlers of the stopped run still pending (a millisecond at most) run out before the next run.
      setTimeout(() => resolve(measures), 50);
    }
    paceArrivals(
      input.length,
      perMs,
      start,
      (due) => {
        arrived = due;
        running.arrive(due);
        if (complete()) end();
      },
      () => ended,
    );
  });
}

/** The cell: every contender with and without the hot key, at the offered rate, in one process. */
export async function cell(): Promise<Record<string, Run>> {
  const all = contenders();
  // The maximum: keyedDispatch's defaults closed-loop (everything available at once), uniform keys.
  const closed = schedule(100_000, false, 1);
  const max: number[] = [];
  for (let i = 0; i < 4; i++)
    max.push((await runOnce(all.share, closed, Number.POSITIVE_INFINITY, true)).rate);
  const offered = Math.round(Math.min(TARGET_RATE, 0.6 * median(max)));
  const count = Math.round((offered * ARRIVAL_MS) / 1000);
  const inputs = { uniform: schedule(count, false, 2), hot: schedule(count, true, 3) };
  return Object.fromEntries(
    Object.keys(all).flatMap((id) =>
      (['uniform', 'hot'] as const).map((mode) => [
        `${id}:${mode}`,
        () => runOnce(all[id], inputs[mode], offered / 1000),
      ]),
    ),
  );
}

async function run({ rounds = 5 }: { rounds?: number }): Promise<Report> {
  const rs: Rounds = inFreshProcess('scenarios/hot-key', { warmups: 1, rounds });
  const med = (id: string, measure: string) => median(series(rs, id, measure));
  const ms = (v: number) =>
    Number.isFinite(v) ? `${v.toFixed(v < 10 ? 2 : 0)} ms` : `> ${DRAIN_MS / 1000} s`;
  const offered = med('share:hot', 'offered');
  const rows = Object.entries(LABELS).flatMap(([id, label]) =>
    (['uniform', 'hot'] as const).map((mode) => [
      mode === 'uniform' ? label : '',
      mode === 'uniform' ? 'no hot key' : 'hot key 50 %',
      percent(med(`${id}:${mode}`, 'coldFinished')),
      ms(med(`${id}:${mode}`, 'coldP99')),
      mode === 'hot' ? ratioCell(ratios(rs, `${id}:hot`, `${id}:uniform`, 'coldP99')) : '',
      Math.round(med(`${id}:${mode}`, 'peakHeld')).toLocaleString('en-US'),
    ]),
  );
  const figures: Record<string, string> = { rate: `${rate(offered)} msgs/s` };
  for (const id of Object.keys(LABELS)) {
    figures[`${id}.finished`] = percent(med(`${id}:hot`, 'coldFinished'));
    figures[`${id}.unfinished`] = percent(1 - med(`${id}:hot`, 'coldFinished'));
    figures[`${id}.p99-ratio`] = times(median(ratios(rs, `${id}:hot`, `${id}:uniform`, 'coldP99')));
    figures[`${id}.held`] = Math.round(med(`${id}:hot`, 'peakHeld')).toLocaleString('en-US');
  }
  return {
    method: `${KEYS.toLocaleString('en-US')} keys; handlers of 0.1–1 ms (half wait one event-loop turn, a quarter \`setTimeout(0)\`, a quarter \`setTimeout(1)\`). An open-loop source offers ${rate(offered)} msgs/s for ${ARRIVAL_MS} ms (${TARGET_RATE / 1000} k, or 60 % of keyedDispatch's closed-loop maximum where that is lower): message *i* arrives at *i* / rate whatever the consumer does. keyedDispatch pulls what has arrived from a receiver, as from a broker's log; the promise chain's producer offers it while a slot is free; groupBy gets it pushed. With the hot key, key 0 gets half the messages, more than one key can handle one at a time; the other keys are cold. A cold message's latency runs from its scheduled arrival to its end; a run waits ${DRAIN_MS / 1000} s after the last arrival, and what has not finished then counts as unfinished. Peak held: most messages taken from the source and not finished. One process, ${rounds} rounds, every contender and workload once a round, rotated; medians, and the p99 ratio as the median of per-round ratios (min–max).`,
    tables: table(
      ['contender', 'workload', 'cold finished', 'cold p99', 'p99 ÷ no hot key', 'peak held'],
      rows,
    ),
    figures,
    chart: {
      title: `Cold messages finished with a hot key at 50 %, ${rate(offered)} msgs/s offered (median %)`,
      categories: Object.keys(LABELS),
      series: [
        {
          name: 'cold messages finished',
          values: Object.keys(LABELS).map((id) => 100 * med(`${id}:hot`, 'coldFinished')),
        },
      ],
      yLabel: '% of cold messages',
    },
    headline: [
      [
        'one key with half the traffic, more than it can handle: the other keys’ messages finished',
        '**{share.finished}** against **{chain.finished}** with a per-key promise chain',
        'RxJS `groupBy` + `concatMap` **{groupBy.finished}**, holding {groupBy.held} messages without bound',
      ],
    ],
  };
}

const scenario: Scenario = {
  title: 'one key carrying half the traffic: the other keys’ messages finished and their p99 latency',
  run,
};

export default scenario;
