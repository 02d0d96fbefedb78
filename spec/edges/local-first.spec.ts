import { KeyedExecutor, keyedDispatch, LocalBus, LocalBusClosedError } from 'keyed-dispatch';
import { lastValueFrom, type Subscription, toArray } from 'rxjs';
import { flushMicrotasks } from '../support/scripted-receiver';

/** One step of a chain: the chain it belongs to and how many sends led to it. */
interface Hop {
  chain: number;
  hop: number;
}

interface Msg {
  key: string;
  seq: number;
}

/** Handlers that wait until released, one by one, in start order. */
class Gates {
  private readonly waiting: Array<() => void> = [];
  open(): Promise<void> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }
  release(): void {
    this.waiting.shift()?.();
  }
  get size(): number {
    return this.waiting.length;
  }
}

/** The same promise, with its rejection handled (a test still awaits it where it matters). */
function quiet(send: Promise<void>): Promise<void> {
  send.catch(() => undefined);
  return send;
}

/** Records the order in which sends resolve. */
function track(sends: Array<Promise<void>>): number[] {
  const resolved: number[] = [];
  sends.forEach(
    (send, i) =>
      void send.then(
        () => resolved.push(i),
        () => undefined,
      ),
  );
  return resolved;
}

describe('LocalBus: a local-first loop of handlers that await their sends', () => {
  it('completes 100 command → event → saga → command chains with maxInFlight 4 on 2 lanes well within a second', async () => {
    const CHAINS = 100;
    const executor = new KeyedExecutor({ lanes: 2 });
    const commands = new LocalBus<Hop>();
    const events = new LocalBus<Hop>();
    const sagaCommands = new LocalBus<Hop>();
    const handled = { commands: 0, events: 0, sagaCommands: 0 };
    let completed = 0;
    const errors: unknown[] = [];
    const failed = { error: (err: unknown) => errors.push(err) };
    let allCompleted!: () => void;
    const finished = new Promise<void>((resolve) => (allCompleted = resolve));
    const options = { executor, maxInFlight: 4, key: (m: Hop) => `order-${m.chain}` };
    const subscriptions: Subscription[] = [
      commands
        .receive()
        .pipe(
          keyedDispatch({
            ...options,
            handle: async (c: Hop) => {
              handled.commands++;
              // The saga's command closes the chain; the first one raises the event.
              if (c.hop === 3) {
                if (++completed === CHAINS) allCompleted();
                return;
              }
              await events.send({ chain: c.chain, hop: c.hop + 1 });
            },
          }),
        )
        .subscribe(failed),
      events
        .receive()
        .pipe(
          keyedDispatch({
            ...options,
            handle: async (e: Hop) => {
              handled.events++;
              await sagaCommands.send({ chain: e.chain, hop: e.hop + 1 });
            },
          }),
        )
        .subscribe(failed),
      sagaCommands
        .receive()
        .pipe(
          keyedDispatch({
            ...options,
            handle: async (s: Hop) => {
              handled.sagaCommands++;
              await commands.send({ chain: s.chain, hop: s.hop + 1 });
            },
          }),
        )
        .subscribe(failed),
    ];
    let timer: NodeJS.Timeout | undefined;
    const startedAt = performance.now();
    try {
      const started = Promise.all(
        Array.from({ length: CHAINS }, (_, chain) => commands.send({ chain, hop: 0 })),
      );
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new Error(
                `the local-first loop stalled: ${completed}/${CHAINS} chains completed within 1 s ` +
                  `(handled ${handled.commands} commands, ${handled.events} events, ${handled.sagaCommands} saga commands)`,
              ),
            ),
          1000,
        );
      });
      await Promise.race([Promise.all([started, finished]), timedOut]);
      const elapsed = performance.now() - startedAt;
      expect(errors).toEqual([]);
      expect(completed).toBe(CHAINS);
      expect(handled).toEqual({ commands: 2 * CHAINS, events: CHAINS, sagaCommands: CHAINS });
      expect(elapsed).toBeLessThan(1000);
    } finally {
      clearTimeout(timer);
      for (const s of subscriptions) s.unsubscribe();
      for (const bus of [commands, events, sagaCommands]) bus.close();
      executor.close();
    }
  });
});

describe('LocalBus: pacing a producer outside any handler', () => {
  it('holds at most maxPending messages per receiver while a producer awaits send() for 1,000,000 messages', async () => {
    const MESSAGES = 1_000_000;
    const executor = new KeyedExecutor({ lanes: 2 });
    const bus = new LocalBus<number>();
    // Handlers finish on the next turn of the event loop (one shared promise per turn), so the producer,
    // which only awaits microtasks, outruns the dispatcher and has to be paced.
    let turn: Promise<void> | null = null;
    const nextTurn = () =>
      (turn ??= new Promise<void>((resolve) =>
        setImmediate(() => {
          turn = null;
          resolve();
        }),
      ));
    let handled = 0;
    const done = lastValueFrom(
      bus.receive().pipe(
        keyedDispatch({
          executor,
          maxInFlight: 256,
          key: (n: number) => n & 31,
          handle: () => {
            handled++;
            return nextTurn();
          },
        }),
      ),
      { defaultValue: undefined },
    );
    let maxHeld = 0;
    for (let n = 0; n < MESSAGES; n++) {
      await bus.send(n);
      const held = bus.pending;
      if (held > maxHeld) maxHeld = held;
    }
    bus.close();
    await done;
    executor.close();
    expect(handled).toBe(MESSAGES);
    // Reached the bound (the producer was paced) and never went beyond it.
    expect(maxHeld).toBe(1024);
  }, 20_000);

  it('fills the queue up to the bound, then resumes the producer one message at a time as the dispatcher takes them', async () => {
    const executor = new KeyedExecutor({ lanes: 1 });
    const bus = new LocalBus<number>({ maxPending: 16 });
    const done = lastValueFrom(
      bus.receive().pipe(
        keyedDispatch({
          executor,
          maxInFlight: 4,
          key: (n: number) => n % 4,
          handle: () => new Promise<void>((resolve) => setImmediate(resolve)),
        }),
      ),
      { defaultValue: undefined },
    );
    let maxHeld = 0;
    for (let n = 0; n < 500; n++) {
      await bus.send(n);
      maxHeld = Math.max(maxHeld, bus.pending);
    }
    bus.close();
    await done;
    executor.close();
    expect(maxHeld).toBe(16);
  });
});

describe('LocalBus: when send() resolves', () => {
  const executor = new KeyedExecutor({ lanes: 1 });
  afterAll(() => executor.close());

  function gatedReceiver(bus: LocalBus<Msg>, maxInFlight: number) {
    const gates = new Gates();
    const handled: number[] = [];
    const sub = bus
      .receive()
      .pipe(
        keyedDispatch({
          executor,
          maxInFlight,
          key: (m: Msg) => m.key,
          handle: (m: Msg) => {
            handled.push(m.seq);
            return gates.open();
          },
        }),
      )
      .subscribe({ error: () => undefined });
    return { gates, handled, sub };
  }

  it('resolves at once while the queue holds fewer than maxPending messages, and beyond it once its message is within the bound', async () => {
    const bus = new LocalBus<Msg>({ maxPending: 2 });
    const { gates, sub } = gatedReceiver(bus, 1);
    const sends = [0, 1, 2, 3, 4].map((seq) => bus.send({ key: `k${seq}`, seq }));
    const resolved = track(sends);
    await flushMicrotasks();
    // 0 is admitted; 1 and 2 wait in the queue, their senders released; 3 and 4 wait for room.
    expect(resolved).toEqual([0, 1, 2]);
    expect(bus.pending).toBe(4);
    gates.release();
    await flushMicrotasks();
    // 1 admitted: 3 is now among the first two queued.
    expect(resolved).toEqual([0, 1, 2, 3]);
    gates.release();
    await flushMicrotasks();
    expect(resolved).toEqual([0, 1, 2, 3, 4]);
    expect(bus.pending).toBe(2);
    sub.unsubscribe();
  });

  it('returns one shared, already resolved promise while there is room, so a send allocates nothing', async () => {
    const bus = new LocalBus<Msg>();
    const { sub } = gatedReceiver(bus, 1);
    const first = quiet(bus.send({ key: 'a', seq: 0 }));
    const queued = quiet(bus.send({ key: 'a', seq: 1 }));
    expect(queued).toBe(first);
    expect(quiet(bus.send({ key: 'b', seq: 2 }))).toBe(first);
    await expect(first).resolves.toBeUndefined();
    sub.unsubscribe();
  });

  it('with maxPending: 0, resolves only when the dispatcher admits the message', async () => {
    const bus = new LocalBus<Msg>({ maxPending: 0 });
    const { gates, sub } = gatedReceiver(bus, 2);
    const resolved = track([0, 1, 2, 3].map((seq) => bus.send({ key: `k${seq}`, seq })));
    await flushMicrotasks();
    expect(resolved).toEqual([0, 1]);
    gates.release();
    gates.release();
    await flushMicrotasks();
    expect(resolved).toEqual([0, 1, 2, 3]);
    sub.unsubscribe();
  });

  it('with maxPending: 0, resolves the send of a message whose key is at its share once it is parked, up to maxParked', async () => {
    const bus = new LocalBus<Msg>({ maxPending: 0 });
    const gates = new Gates();
    const sub = bus
      .receive()
      .pipe(
        keyedDispatch({
          executor,
          maxInFlight: 8,
          maxPerKey: 1,
          maxParked: 2,
          key: (m: Msg) => m.key,
          handle: () => gates.open(),
        }),
      )
      .subscribe({ error: () => undefined });
    // 0 enters the window; 1 and 2 park behind it (taken in); 3 finds the parking area full and waits.
    const resolved = track([0, 1, 2, 3].map((seq) => bus.send({ key: 'a', seq })));
    await flushMicrotasks();
    expect(resolved).toEqual([0, 1, 2]);
    gates.release();
    await flushMicrotasks();
    expect(resolved).toEqual([0, 1, 2, 3]);
    sub.unsubscribe();
  });

  it('keeps messages sent before any receiver for the first one, releasing their senders within the bound', async () => {
    const bus = new LocalBus<Msg>({ maxPending: 2 });
    const resolved = track([0, 1, 2].map((seq) => bus.send({ key: 'a', seq })));
    await flushMicrotasks();
    expect(resolved).toEqual([0, 1]);
    expect(bus.pending).toBe(3);
    const { gates, handled, sub } = gatedReceiver(bus, 1);
    await flushMicrotasks();
    expect(handled).toEqual([0]);
    expect(resolved).toEqual([0, 1, 2]);
    gates.release();
    await flushMicrotasks();
    expect(handled).toEqual([0, 1]);
    sub.unsubscribe();
  });

  it('publishes to every receiver, releasing a sender once its message is within the bound of each', async () => {
    const bus = new LocalBus<Msg>({ maxPending: 1 });
    const fast = gatedReceiver(bus, 4);
    const slow = gatedReceiver(bus, 1);
    const resolved = track([0, 1, 2].map((seq) => bus.send({ key: 'k', seq })));
    await flushMicrotasks();
    // The slow receiver admitted 0 and holds 1 (within the bound) and 2 (beyond it).
    expect(resolved).toEqual([0, 1]);
    slow.gates.release();
    await flushMicrotasks();
    expect(resolved).toEqual([0, 1, 2]);
    fast.sub.unsubscribe();
    slow.sub.unsubscribe();
  });

  it('drops what a leaving receiver had not delivered, and rejects its senders still waiting with LocalBusClosedError', async () => {
    const bus = new LocalBus<Msg>({ maxPending: 1 });
    const { sub } = gatedReceiver(bus, 1);
    const sends = [0, 1, 2].map((seq) => quiet(bus.send({ key: 'a', seq })));
    await flushMicrotasks();
    sub.unsubscribe();
    await expect(sends[0]).resolves.toBeUndefined();
    await expect(sends[1]).resolves.toBeUndefined();
    await expect(sends[2]).rejects.toBeInstanceOf(LocalBusClosedError);
    expect(bus.pending).toBe(0);
    expect(bus.receivers).toBe(0);
  });

  it('on close(), delivers what was sent, releases waiting senders as their messages come within the bound, then completes', async () => {
    const bus = new LocalBus<Msg>({ maxPending: 1 });
    const sends = [0, 1, 2].map((seq) => quiet(bus.send({ key: 'a', seq })));
    const out = lastValueFrom(
      bus
        .receive()
        .pipe(
          keyedDispatch({ executor, maxInFlight: 1, key: (m: Msg) => m.key, handle: (m: Msg) => [m.seq] }),
          toArray(),
        ),
    );
    bus.close();
    expect(await out).toEqual([0, 1, 2]);
    await Promise.all(sends);
    await expect(bus.send({ key: 'a', seq: 3 })).rejects.toBeInstanceOf(LocalBusClosedError);
  });

  it('closed before any receiver, keeps what it accepted for the first one and rejects senders still waiting for room', async () => {
    const bus = new LocalBus<Msg>({ maxPending: 1 });
    const sends = [0, 1].map((seq) => quiet(bus.send({ key: 'a', seq })));
    bus.close();
    await expect(sends[0]).resolves.toBeUndefined();
    await expect(sends[1]).rejects.toBeInstanceOf(LocalBusClosedError);
    expect(bus.pending).toBe(1);
    const out = await lastValueFrom(
      bus
        .receive()
        .pipe(keyedDispatch({ executor, key: (m: Msg) => m.key, handle: (m: Msg) => [m.seq] }), toArray()),
    );
    expect(out).toEqual([0]);
    expect(bus.pending).toBe(0);
  });

  it.each([-1, 1.5, Number.POSITIVE_INFINITY, '8', null])(
    'rejects maxPending %p with a TypeError naming the option',
    (maxPending) => {
      expect(() => new LocalBus({ maxPending: maxPending as number })).toThrow(TypeError);
      expect(() => new LocalBus({ maxPending: maxPending as number })).toThrow(
        /^LocalBus: expected `maxPending` to be an integer >= 0, got /,
      );
    },
  );

  it('rejects options that are not an object', () => {
    expect(() => new LocalBus(42 as never)).toThrow(
      /^LocalBus: expected an options object, got 42 \(number\)/,
    );
  });
});
