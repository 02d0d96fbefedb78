import { DispatchMetrics, fromIterable, keyedDispatch, retryPolicy } from 'keyed-dispatch';
import { lastValueFrom, Subject, toArray } from 'rxjs';
import { OldestUnfinishedTracker } from '../../src/metrics/oldest-unfinished';
import { laneKinds, type Msg, type Ran } from '../lanes/lane-kinds';
import { sleep } from '../support/waits';

describe.each(laneKinds)('DispatchMetrics on %s', (_name, kind) => {
  let lanes: ReturnType<typeof kind.executor>;
  beforeAll(() => {
    lanes = kind.executor(1);
  });
  afterAll(() => lanes.close());

  /** Runs a, b, c through `boom` (b fails) with a policy that dead-letters or not; returns the metrics and the time span. */
  async function runBoom(deadLetter: boolean) {
    const metrics = new DispatchMetrics();
    const before = Date.now();
    await lastValueFrom(
      fromIterable<Msg>([
        { key: 'a', n: 2 },
        { key: 'b', n: 1 },
        { key: 'c', n: 2 },
      ]).pipe(
        keyedDispatch<Msg, string, Ran>({
          executor: lanes.executor,
          key: (m) => m.key,
          handle: kind.handler('boom'),
          failurePolicy: retryPolicy({
            maxAttempts: 1,
            ...(deadLetter ? { deadLetter: () => undefined } : {}),
          }),
          stats: metrics,
        }),
        toArray(),
      ),
    );
    return { read: metrics.read(), before, after: Date.now() };
  }

  it('counts the dead-lettered messages apart, and keeps the last failure with its error, key, outcome and time', async () => {
    const dead = await runBoom(true);
    expect(dead.read).toMatchObject({ settled: 2, failed: 1, deadLettered: 1 });
    expect(dead.read.lastFailure).toMatchObject({ key: 'b', source: undefined, outcome: 'dead-lettered' });
    expect(dead.read.lastFailure?.error).toMatchObject({ message: 'boom b' });
    expect(dead.read.lastFailure?.time).toBeGreaterThanOrEqual(dead.before);
    expect(dead.read.lastFailure?.time).toBeLessThanOrEqual(dead.after);

    const failed = await runBoom(false);
    expect(failed.read).toMatchObject({ settled: 2, failed: 1, deadLettered: 0 });
    expect(failed.read.lastFailure).toMatchObject({ key: 'b', outcome: 'failed' });
  });

  it('dates the oldest unfinished message by the first reading that finds it, and forgets it once the dispatcher ends', async () => {
    const metrics = new DispatchMetrics();
    const source = new Subject<Msg>();
    const subscription = source
      .pipe(
        keyedDispatch<Msg, string, Ran>({
          executor: lanes.executor,
          key: (m) => m.key,
          handle: kind.handler('hang'),
          stats: metrics,
        }),
      )
      .subscribe();
    try {
      // Nothing in flight at the first reading: what comes later is dated exactly, to a reading.
      expect(metrics.read().oldestUnfinished).toBeNull();
      source.next({ key: 'stuck', n: 1, channel: `oldest-${kind.name}` });
      const found = Date.now();
      expect(metrics.read().oldestUnfinished).toEqual({ ageMs: 0, atLeast: false });
      const dated = Date.now();
      await sleep(60);
      source.next({ key: 'later', n: 1, channel: `oldest-${kind.name}` });
      const before = Date.now();
      const { inFlight, oldestUnfinished } = metrics.read();
      expect(inFlight).toBe(2);
      expect(oldestUnfinished?.atLeast).toBe(false);
      expect(oldestUnfinished?.ageMs).toBeGreaterThanOrEqual(before - dated);
      expect(oldestUnfinished?.ageMs).toBeLessThanOrEqual(Date.now() - found);
    } finally {
      subscription.unsubscribe();
    }
    expect(metrics.read().oldestUnfinished).toBeNull();
  });
});

describe('OldestUnfinishedTracker', () => {
  it('tells equal messages apart by count, the oldest finishing first', () => {
    const tracker = new OldestUnfinishedTracker();
    expect(tracker.read(['a'], 1000)).toEqual({ ageMs: 0, atLeast: true });
    expect(tracker.read(['a', 'a'], 1100)).toEqual({ ageMs: 100, atLeast: true });
    // One 'a' finished: the one found first; the other counts from 1100.
    expect(tracker.read(['a'], 1300)).toEqual({ ageMs: 200, atLeast: false });
    expect(tracker.read([], 1400)).toBeNull();
    expect(tracker.read(['a'], 1500)).toEqual({ ageMs: 0, atLeast: false });
  });

  it('dates a message it met at its first reading as at least that old, until a reset', () => {
    const tracker = new OldestUnfinishedTracker();
    const message = { key: 'k' };
    tracker.read([message], 0);
    expect(tracker.read([message, { key: 'j' }], 250)).toEqual({ ageMs: 250, atLeast: true });
    tracker.reset();
    expect(tracker.read([message], 300)).toEqual({ ageMs: 0, atLeast: true });
  });
});
