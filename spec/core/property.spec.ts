import fc from 'fast-check';
import { DispatchStats, fromIterable, KeyedExecutor, keyedDispatch } from 'keyed-dispatch';
import { defer, lastValueFrom, of, toArray } from 'rxjs';

type Kind = 'sync' | 'async' | 'observable' | 'error';

interface Msg {
  id: number;
  key: number;
  seq: number;
  kind: Kind;
}

const scenario = fc.record({
  messages: fc.array(
    fc.record({
      key: fc.integer({ min: 0, max: 12 }),
      kind: fc.constantFrom<Kind>('sync', 'async', 'observable', 'error'),
    }),
    { maxLength: 200 },
  ),
  allowErrors: fc.constantFrom(false, false, true),
  maxInFlight: fc.integer({ min: 1, max: 40 }),
  /** The key's share and the parking area, as fractions of the window (1 turns the share off). */
  share: fc.double({ min: 0, max: 1, noNaN: true }),
  maxParked: fc.integer({ min: 1, max: 40 }),
  throughput: fc.integer({ min: 1, max: 20 }),
  lanes: fc.integer({ min: 1, max: 4 }),
});

describe('keyedDispatch (property)', () => {
  it('handles every message exactly once, in per-key order, within the window and the parking area, and leaves no mailbox', async () => {
    await fc.assert(
      fc.asyncProperty(
        scenario,
        async ({ messages, allowErrors, maxInFlight, share, maxParked, throughput, lanes }) => {
          const maxPerKey = Math.max(1, Math.round(share * maxInFlight));
          const executor = new KeyedExecutor({ lanes });
          const stats = new DispatchStats();
          const nextSeq = new Map<number, number>();
          const input: Msg[] = messages.map((m, id) => {
            const seq = nextSeq.get(m.key) ?? 0;
            nextSeq.set(m.key, seq + 1);
            // Errors only where the scenario allows them, so most runs check the complete flow.
            const kind = m.kind === 'error' && !allowErrors ? 'sync' : m.kind;
            return { id, key: m.key, seq, kind };
          });
          const started = new Map<number, number>();
          const running = new Set<number>();
          const handledCount = new Map<number, number>();
          let unsettled = 0;
          let maxUnsettled = 0;
          const handle = (m: Msg) => {
            if (running.has(m.key)) throw new Error(`key ${m.key} ran two messages at once`);
            const expected = started.get(m.key) ?? 0;
            if (m.seq !== expected)
              throw new Error(`key ${m.key} started seq ${m.seq}, expected ${expected}`);
            started.set(m.key, expected + 1);
            handledCount.set(m.id, (handledCount.get(m.id) ?? 0) + 1);
            maxUnsettled = Math.max(maxUnsettled, unsettled);
            running.add(m.key);
            const finish = () => {
              running.delete(m.key);
              return m.id;
            };
            switch (m.kind) {
              case 'sync':
                return [finish()];
              case 'async':
                return Promise.resolve().then(finish);
              case 'observable':
                return defer(() => of(finish()));
              default:
                running.delete(m.key);
                throw new Error(`failing ${m.id}`);
            }
          };
          let outcome: number[] | Error;
          try {
            outcome = await lastValueFrom(
              // Each delivery counts as unsettled until the receiver is told its outcome.
              fromIterable(
                (function* () {
                  for (const m of input) {
                    unsettled++;
                    yield m;
                  }
                })(),
                { onSettled: () => unsettled-- },
              ).pipe(
                keyedDispatch({
                  executor,
                  stats,
                  maxInFlight,
                  maxPerKey,
                  maxParked,
                  throughput,
                  key: (m: Msg) => m.key,
                  handle,
                }),
                toArray(),
              ),
            );
          } catch (err) {
            outcome = err as Error;
          }
          const firstError = input.find((m) => m.kind === 'error');
          if (firstError === undefined) {
            expect(outcome).toHaveLength(input.length);
            expect(new Set(outcome as number[]).size).toBe(input.length);
            for (const m of input) expect(handledCount.get(m.id)).toBe(1);
          } else {
            expect(outcome).toBeInstanceOf(Error);
            for (const count of handledCount.values()) expect(count).toBe(1);
          }
          // The window holds at most maxInFlight; what waits outside it, at most maxParked more.
          expect(stats.maxInFlightSeen).toBeLessThanOrEqual(maxInFlight);
          expect(maxUnsettled).toBeLessThanOrEqual(maxInFlight + maxParked);
          expect(stats.liveMailboxes).toBe(0);
          expect(executor.liveMailboxes).toBe(0);
          await executor.close();
        },
      ),
      { seed: 20261130, numRuns: 150 },
    );
  });
});
