import {
  DispatchMetrics,
  fromIterable,
  KeyedExecutor,
  keyedDispatch,
  retryPolicy,
  ThreadExecutor,
  threadHandler,
} from 'keyed-dispatch';
import { lastValueFrom, type Subscription, toArray } from 'rxjs';
import { aFewTurns, recordEscapes } from '../support/escapes';
import { waitFor } from '../support/waits';
import { FIXTURES, laneKinds, type Msg, type Ran } from './lane-kinds';
import { outcomeOf, within } from './shared-state';

describe.each(laneKinds)('a handler that holds its lane, on %s', (_name, kind) => {
  it('is reported as a long turn, to `onLongTurn` and in the metrics, with its lane and how long it held it', async () => {
    const reports: Array<[number, number]> = [];
    const options = {
      longTurnMs: 50,
      onLongTurn: (lane: number, ms: number) => reports.push([lane, ms]),
    };
    const executor = kind.threads
      ? new ThreadExecutor({ workers: 1, ...options })
      : new KeyedExecutor({ lanes: 1, ...options });
    try {
      const metrics = new DispatchMetrics({ longTurnMs: 50 });
      await lastValueFrom(
        fromIterable<Msg>([
          { key: 'quick', n: 1, spinMs: 0 },
          { key: 'slow', n: 1, spinMs: 300 },
        ]).pipe(
          keyedDispatch<Msg, string, Ran>({
            executor,
            key: (m) => m.key,
            handle: kind.handler('spin'),
            stats: metrics,
          }),
          toArray(),
        ),
      );
      expect(reports).toHaveLength(1);
      expect(reports[0]?.[0]).toBe(0);
      expect(reports[0]?.[1]).toBeGreaterThanOrEqual(50);
      expect(metrics.read().longTurns.count).toBe(1);
      expect(metrics.read().longTurns.maxMs).toBeGreaterThanOrEqual(50);
    } finally {
      await executor.close();
    }
  });
});

describe.each(laneKinds)(
  'an onLongTurn listener that throws a value with no text form, on %s',
  (_name, kind) => {
    it('is dropped with a warning, and nothing escapes to the process', async () => {
      const escapes = recordEscapes();
      const options = {
        longTurnMs: 20,
        onLongTurn: () => {
          throw Object.create(null);
        },
      };
      const executor = kind.threads
        ? new ThreadExecutor({ workers: 1, ...options })
        : new KeyedExecutor({ lanes: 1, ...options });
      try {
        const ran = await lastValueFrom(
          fromIterable<Msg>([
            { key: 'a', n: 1, spinMs: 100 },
            { key: 'b', n: 1, spinMs: 100 },
          ]).pipe(
            keyedDispatch<Msg, string, Ran>({ executor, key: (m) => m.key, handle: kind.handler('spin') }),
            toArray(),
          ),
        );
        await aFewTurns(50);
        expect(ran).toHaveLength(2);
        expect(escapes.escaped).toEqual([]);
        expect(escapes.warnings).toEqual([
          expect.stringContaining('onLongTurn failed and is no longer called'),
        ]);
      } finally {
        escapes.restore();
        await executor.close();
      }
    });
  },
);

/** 100 keys of 5 messages each; message 1 of key k0 spins (for ever, unless bounded). */
function busyLoopMessages(): Msg[] {
  const messages: Msg[] = [];
  for (let n = 1; n <= 5; n++)
    for (let k = 0; k < 100; k++) messages.push({ key: `k${k}`, n, spinMs: k === 0 && n === 1 ? 1e9 : 0 });
  return messages;
}

describe('a thread handler that never returns, on workers: 2 with 100 keys', () => {
  it('is reported as a long turn from the main thread while it runs', async () => {
    const reports: Array<[number, number]> = [];
    const executor = new ThreadExecutor({
      workers: 2,
      longTurnMs: 100,
      onLongTurn: (lane, ms) => reports.push([lane, ms]),
    });
    const metrics = new DispatchMetrics({ longTurnMs: 100 });
    let subscription: Subscription | undefined;
    try {
      subscription = fromIterable(busyLoopMessages())
        .pipe(
          keyedDispatch<Msg, string, Ran>({
            executor,
            key: (m) => m.key,
            handle: threadHandler(FIXTURES, 'spin'),
            stats: metrics,
          }),
        )
        .subscribe({ error: () => {} });
      await waitFor(() => reports.length > 0, 10_000, 'the long turn to be reported');
      expect(reports[0]?.[1]).toBeGreaterThanOrEqual(100);
      expect(metrics.read().longTurns.count).toBeGreaterThanOrEqual(1);
    } finally {
      subscription?.unsubscribe();
      await executor.close();
    }
  });

  it('with `maxBlockingMs`, fails the stuck message to its policy naming the bound and the key, and every other message completes', async () => {
    const executor = new ThreadExecutor({ workers: 2, maxBlockingMs: 500 });
    try {
      const dead: string[] = [];
      const settled: string[] = [];
      const outcome = await outcomeOf(
        within(
          lastValueFrom(
            fromIterable(busyLoopMessages(), {
              onSettled: (m, how) => settled.push(`${m.key}:${m.n}:${how}`),
            }).pipe(
              keyedDispatch<Msg, string, Ran>({
                executor,
                key: (m) => m.key,
                handle: threadHandler(FIXTURES, 'spin'),
                failurePolicy: retryPolicy({
                  maxAttempts: 1,
                  deadLetter: (m, error) => void dead.push(`${m.key}:${m.n}: ${String(error)}`),
                }),
              }),
              toArray(),
            ),
          ),
          30_000,
          'the output to end',
        ),
      );
      expect(outcome).toEqual({ value: expect.any(Array) });
      expect(dead).toEqual([expect.stringContaining('k0:1: ThreadBlockedError')]);
      expect(dead[0]).toContain('`maxBlockingMs` (500 ms)');
      expect(dead[0]).toContain('key k0');
      expect(settled.filter((s) => s.endsWith(':done'))).toHaveLength(499);
      expect(settled.filter((s) => !s.endsWith(':done'))).toEqual(['k0:1:dead-lettered']);
    } finally {
      await executor.close();
    }
  });

  it('with `maxBlockingMs` and no policy, errors the output with that error, as a handler error does', async () => {
    const executor = new ThreadExecutor({ workers: 2, maxBlockingMs: 300 });
    try {
      const outcome = await outcomeOf(
        within(
          lastValueFrom(
            fromIterable(busyLoopMessages()).pipe(
              keyedDispatch<Msg, string, Ran>({
                executor,
                key: (m) => m.key,
                handle: threadHandler(FIXTURES, 'spin'),
              }),
            ),
          ),
          30_000,
          'the output to end',
        ),
      );
      expect(outcome).toEqual({
        error: expect.objectContaining({ name: 'ThreadBlockedError', maxBlockingMs: 300 }),
      });
    } finally {
      await executor.close();
    }
  });

  it('refuses a `maxBlockingMs` that is not an integer >= 1, naming it', () => {
    expect(() => new ThreadExecutor({ maxBlockingMs: 0 })).toThrow(
      'ThreadExecutor: expected `maxBlockingMs` to be an integer >= 1, got 0 (number)',
    );
  });
});
