import { DispatchMetrics, fromIterable, KeyedExecutor, keyedDispatch } from 'keyed-dispatch';
import type { Subscription } from 'rxjs';

interface Msg {
  key: string;
  n: number;
}

/** Runs `messages`; only cold keys' handlers finish, so whatever else is taken in stays unfinished. */
function holdAll(messages: Msg[], options: { maxInFlight: number; maxPerKey: number; maxParked?: number }) {
  const executor = new KeyedExecutor({ lanes: 1 });
  const metrics = new DispatchMetrics();
  const subscription: Subscription = fromIterable(messages)
    .pipe(
      keyedDispatch({
        executor,
        key: (m: Msg) => m.key,
        // Cold keys' handlers finish at once; the others never do.
        handle: (m: Msg) => (m.key.startsWith('cold') ? [m.n] : new Promise<never>(() => undefined)),
        stats: metrics,
        ...options,
      }),
    )
    .subscribe();
  return {
    metrics,
    stop: () => {
      subscription.unsubscribe();
      return executor.close();
    },
  };
}

const of = (key: (n: number) => string, count: number): Msg[] =>
  Array.from({ length: count }, (_, n) => ({ key: key(n), n }));

describe('DispatchMetrics.read().heldBy', () => {
  it('names the key that fills the whole window when the per-key share is off', async () => {
    const run = holdAll(
      of(() => 'hot', 100),
      { maxInFlight: 16, maxPerKey: 16 },
    );
    expect(run.metrics.read().heldBy).toEqual({ key: 'hot', backlog: 16, parked: 0 });
    await run.stop();
  });

  it('names the key whose parked messages fill the parking area when the share is on', async () => {
    // Cold messages finish and more is asked for, until the hot key's parked messages fill the area.
    const run = holdAll(
      of((n) => (n % 2 === 0 ? 'hot' : `cold${n}`), 200),
      { maxInFlight: 16, maxPerKey: 4, maxParked: 12 },
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(run.metrics.read()).toMatchObject({ inFlight: 4, parked: 12 });
    expect(run.metrics.read().heldBy).toEqual({ key: 'hot', backlog: 16, parked: 12 });
    await run.stop();
  });

  it('is null when a key parks in a roomy parking area while other keys fill the window', async () => {
    // Cold messages finish while the hot key parks past its share; then 12 keys take one place each and
    // keep it: the window is full, but of other keys, and the parking area has room.
    const run = holdAll([...of((n) => (n % 2 === 0 ? 'hot' : `cold${n}`), 100), ...of((n) => `w${n}`, 12)], {
      maxInFlight: 16,
      maxPerKey: 4,
      maxParked: 1000,
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(run.metrics.read()).toMatchObject({ inFlight: 16, parked: 46 });
    expect(run.metrics.read().heldBy).toBeNull();
    await run.stop();
  });

  it('is null while intake flows, and when many keys fill the window together', async () => {
    const flowing = holdAll(
      of(() => 'hot', 8),
      { maxInFlight: 16, maxPerKey: 16 },
    );
    expect(flowing.metrics.read().heldBy).toBeNull();
    await flowing.stop();
    const many = holdAll(
      of((n) => `k${n % 4}`, 100),
      { maxInFlight: 16, maxPerKey: 16 },
    );
    expect(many.metrics.read().inFlight).toBe(16);
    expect(many.metrics.read().heldBy).toBeNull();
    await many.stop();
  });
});
