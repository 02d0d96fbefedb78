import { concatMap, groupBy, mergeMap, Subject } from 'rxjs';
import { KeyedExecutor, keyedDispatch } from '../../src';
import { type Alternation, alternate, inFreshProcess, type Run, series } from '../harness';
import type { Report, Scenario } from '../report';
import { median, minMax, table, times } from '../stats';

/**
 * Memory after many distinct keys: a pipeline that stays subscribed (its source never completes) is fed
 * 1,000,000 distinct keys, one message each; its heap after ÷ before. keyedDispatch against groupBy +
 * concatMap, which keeps every group while its source is open.
 */

const KEYS = 1_000_000;
const WARM_UP_KEYS = 10_000;
/** Messages pushed per event-loop turn, as a hot producer does. */
const BATCH = 10_000;

const LABELS: Record<string, string> = {
  ours: 'keyedDispatch, `async (m) => m`',
  groupBy: '`groupBy(key)` + `mergeMap(concatMap)`, no duration selector',
};

interface Cell extends Alternation {
  contender: string;
}

type Pipeline = (subject: Subject<{ key: number }>, done: () => void) => void;

const pipelines: Record<string, Pipeline> = {
  ours: (subject, done) =>
    subject
      .pipe(keyedDispatch({ executor: new KeyedExecutor(), key: (m) => m.key, handle: async (m) => m }))
      .subscribe(done),
  groupBy: (subject, done) =>
    subject
      .pipe(
        groupBy((m) => m.key),
        mergeMap((g) => g.pipe(concatMap(async (m) => m))),
      )
      .subscribe(done),
};

function heapMb(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

/** One run in its own process: heap in service (after a warm-up burst) and after 1,000,000 more keys. */
export function cell({ contender }: Cell): Record<string, Run> {
  return {
    [contender]: async () => {
      const subject = new Subject<{ key: number }>();
      let left = 0;
      let drained = () => {};
      pipelines[contender](subject, () => {
        if (--left === 0) drained();
      });
      const burst = async (first: number, count: number) => {
        const done = new Promise<void>((resolve) => (drained = resolve));
        left = count;
        for (let at = first; at < first + count; at += BATCH) {
          for (let key = at; key < Math.min(first + count, at + BATCH); key++) subject.next({ key });
          await new Promise((resolve) => setImmediate(resolve));
        }
        await done;
        await new Promise((resolve) => setImmediate(resolve));
      };
      await burst(-WARM_UP_KEYS, WARM_UP_KEYS);
      const before = heapMb();
      await burst(0, KEYS);
      const after = heapMb();
      return { before, after, ratio: after / before };
    },
  };
}

async function run({ rounds = 3 }: { rounds?: number }): Promise<Report> {
  const runs = Object.fromEntries(
    Object.keys(LABELS).map((contender) => [
      contender,
      async () => inFreshProcess('scenarios/memory', { contender, warmups: 0, rounds: 1 })[contender][0],
    ]),
  );
  const results = await alternate(runs, { warmups: 0, rounds });
  const mb = (x: number) => `${x.toFixed(1)} MB`;
  const rows = Object.entries(LABELS).map(([id, label]) => {
    const [lo, hi] = minMax(series(results, id, 'ratio'));
    return [
      label,
      mb(median(series(results, id, 'before'))),
      mb(median(series(results, id, 'after'))),
      `${times(median(series(results, id, 'ratio')))} (${times(lo)}–${times(hi)})`,
    ];
  });
  const ratio = (id: string) => times(median(series(results, id, 'ratio')));
  return {
    method:
      `Each run is a fresh process: a pipeline subscribed to a plain \`Subject\` that never completes gets a warm-up ` +
      `burst of ${WARM_UP_KEYS.toLocaleString('en-US')} distinct keys, then ${KEYS.toLocaleString('en-US')} more, ` +
      `${BATCH.toLocaleString('en-US')} per event-loop turn, one message each. The heap is read after two forced ` +
      `collections, once every message has finished: before (in service, after the warm-up) and after. ${rounds} ` +
      'runs per contender, taking turns; medians (min–max of the ratio).',
    tables: table(['contender', 'heap before', 'heap after', 'after ÷ before'], rows),
    figures: { ours: ratio('ours'), groupBy: ratio('groupBy') },
    chart: {
      title: `Heap before and after ${KEYS.toLocaleString('en-US')} distinct keys (median MB)`,
      categories: ['keyedDispatch', 'groupBy + concatMap'],
      series: ['before', 'after'].map((m) => ({
        name: `heap ${m}`,
        values: Object.keys(LABELS).map((id) => median(series(results, id, m))),
      })),
      yLabel: 'MB',
    },
    headline: [
      [
        '1,000,000 distinct keys: heap after ÷ before',
        '**{ours}** (RxJS `groupBy` + `concatMap`: **{groupBy}**)',
        '—',
      ],
    ],
  };
}

const scenario: Scenario = { title: 'heap after 1,000,000 distinct keys against groupBy + concatMap', run };

export default scenario;
