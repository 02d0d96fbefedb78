import fc from 'fast-check';
import { fromIterable, keyedDispatch, type Settlement, threadHandler } from 'keyed-dispatch';
import { type MonoTypeOperatorFunction, type Observable, take, takeUntil, tap, timer } from 'rxjs';
import { waitFor } from '../support/waits';
import { FIXTURES, type LaneKind, laneKinds } from './lane-kinds';
import { sharedInts, within } from './shared-state';

type Kind = 'sync' | 'microtask' | 'macrotask' | 'thenable' | 'throw' | 'reject';

/** A message of the model: what the `model` fixture handler needs to record its run. */
interface ModelMsg {
  key: string;
  keyIndex: number;
  n: number;
  id: number;
  kind: Kind;
  perKey: Int32Array;
  log: Int32Array;
  starts: Int32Array;
  ends: Int32Array;
}

const cancellation = fc.oneof(
  fc.constant({ at: 'never' as const }),
  fc.record({ at: fc.constant('values' as const), values: fc.integer({ min: 1, max: 40 }) }),
  fc.record({ at: fc.constant('delay' as const), ms: fc.integer({ min: 0, max: 4 }) }),
);

const scenario = fc.record({
  keys: fc.integer({ min: 1, max: 4 }),
  messages: fc.array(
    fc.record({
      key: fc.nat(),
      kind: fc.constantFrom<Kind>(
        'sync',
        'sync',
        'microtask',
        'macrotask',
        'macrotask',
        'thenable',
        'throw',
        'reject',
      ),
    }),
    { maxLength: 40, size: 'medium' },
  ),
  allowErrors: fc.constantFrom(false, false, true),
  maxInFlight: fc.integer({ min: 1, max: 20 }),
  throughput: fc.integer({ min: 1, max: 8 }),
  cancel: cancellation,
  /** The message whose settlement hook throws (an acknowledgement that fails), if any. */
  throwOnSettle: fc.option(fc.nat({ max: 60 }), { freq: 4 }),
});
type Scenario = typeof scenario extends fc.Arbitrary<infer S> ? S : never;

function cancelled(cancel: Scenario['cancel']): MonoTypeOperatorFunction<number> {
  if (cancel.at === 'values') return take(cancel.values);
  if (cancel.at === 'delay') return takeUntil(timer(cancel.ms));
  return (source) => source;
}

/** Runs one scenario on `kind`'s lanes and returns every rule it broke (empty when none). */
async function check(kind: LaneKind, executor: ReturnType<LaneKind['executor']>['executor'], s: Scenario) {
  const n = s.messages.length;
  const perKey = sharedInts(2 * s.keys);
  const log = sharedInts(1 + n);
  const starts = sharedInts(n);
  const ends = sharedInts(n);
  const input: ModelMsg[] = s.messages.map((m, id) => {
    const keyIndex = m.key % s.keys;
    // Failures only where the scenario allows them, so most runs check the complete flow.
    const kind = (m.kind === 'throw' || m.kind === 'reject') && !s.allowErrors ? 'sync' : m.kind;
    return { key: `k${keyIndex}`, keyIndex, n: id, id, kind, perKey, log, starts, ends };
  });
  const broken: string[] = [];
  let hookThrew = false;
  const settlements: Settlement[][] = input.map(() => []);
  const onSettled = (m: ModelMsg, outcome: Settlement) => {
    if (Atomics.load(ends, m.id) !== 1)
      broken.push(`message ${m.id} settled ${outcome} before its handler ended`);
    settlements[m.id].push(outcome);
    if (m.id === s.throwOnSettle) {
      hookThrew = true;
      throw new Error(`onSettled threw for ${m.id}`);
    }
  };
  const values: number[] = [];
  const ended: { by?: 'complete' | 'error' } = {};
  const output: Observable<number> = fromIterable(input, { onSettled }).pipe(
    keyedDispatch<ModelMsg, string, number>({
      executor,
      key: (m) => m.key,
      handle: kind.threads ? threadHandler<ModelMsg, number>(FIXTURES, 'model') : require(FIXTURES).model,
      maxInFlight: s.maxInFlight,
      throughput: s.throughput,
    }),
    tap({
      next: (v) => values.push(v),
      complete: () => (ended.by = 'complete'),
      error: () => (ended.by = 'error'),
    }),
    cancelled(s.cancel),
  );
  await within(
    new Promise<void>((resolve) => output.subscribe({ complete: resolve, error: () => resolve() })),
    10_000,
    'the output to end',
  );
  // Handlers still running (cancelled, or behind a failure) finish on their own: wait for them. A thread
  // may also start a message it was sent before the cancellation reached it, so the log is read only
  // while no start is half-recorded (counted in the log, its id not yet written): when the log's count,
  // the starts and the ends agree, before and after reading it.
  const total = (counters: Int32Array) => counters.reduce((sum, c) => sum + c, 0);
  const quiet = () => {
    const count = Atomics.load(log, 0);
    return count === total(starts) && count === total(ends) ? count : -1;
  };
  let started: number[] = [];
  await waitFor(
    () => {
      const count = quiet();
      if (count < 0) return false;
      started = Array.from(log.subarray(1, 1 + count));
      return quiet() === count;
    },
    10_000,
    'every started handler to end',
  );

  for (let k = 0; k < s.keys; k++) {
    const most = Atomics.load(perKey, 2 * k + 1);
    if (most > 1) broken.push(`key k${k} ran ${most} handlers at once`);
  }
  for (let k = 0; k < s.keys; k++) {
    const order = started.filter((id) => input[id].keyIndex === k);
    const received = input.filter((m) => m.keyIndex === k).map((m) => m.id);
    if (order.join() !== received.slice(0, order.length).join())
      broken.push(`key k${k} started [${order}], received [${received}]`);
  }
  for (const m of input) {
    const ran = Atomics.load(starts, m.id);
    const outcomes = settlements[m.id];
    if (ran > 1) broken.push(`message ${m.id} ran ${ran} times`);
    if (outcomes.length > 1) broken.push(`message ${m.id} settled ${outcomes.length} times: ${outcomes}`);
    if (outcomes[0] === 'done' && ran !== 1) broken.push(`message ${m.id} settled done, ran ${ran} times`);
    if (outcomes[0] === 'failed' && m.kind !== 'throw' && m.kind !== 'reject')
      broken.push(`message ${m.id} (${m.kind}) settled failed`);
    if (ended.by === 'complete' && outcomes.length !== 1)
      broken.push(`the output completed, message ${m.id} settled ${outcomes.length} times`);
  }
  if (ended.by === 'complete' && hookThrew) broken.push('the output completed although onSettled threw');
  if (
    ended.by === 'complete' &&
    values
      .slice()
      .sort((a, b) => a - b)
      .join() !== input.map((m) => m.id).join()
  )
    broken.push(`the output completed with values [${values}]`);
  return broken;
}

describe.each(laneKinds)('keyedDispatch on %s (model)', (_name, kind) => {
  let lanes: ReturnType<LaneKind['executor']>;
  beforeAll(() => {
    lanes = kind.executor(2);
  });
  afterAll(async () => {
    await lanes.close();
  });

  it('runs one handler per key at a time in receive order, settles each message at most once after it ran, whatever the handlers do and wherever it is cancelled', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        expect(await check(kind, lanes.executor, s)).toEqual([]);
      }),
      { seed: 20261207, numRuns: 500 },
    );
  });
});
