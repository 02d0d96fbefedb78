import { DispatchMetrics, fromIterable, keyedDispatch } from 'keyed-dispatch';
import { lastValueFrom, type Subscription, toArray } from 'rxjs';
import { ScriptedReceiver } from '../support/scripted-receiver';
import { sleep, waitFor } from '../support/waits';
import { byKey, type LaneKind, laneKinds, type Msg, type Ran } from './lane-kinds';
import { sharedInts } from './shared-state';

describe.each(laneKinds)('a hot key on %s', (_name, kind) => {
  let lanes: ReturnType<LaneKind['executor']>;
  let subscription: Subscription | undefined;
  /** Gates opened after each test, pass or fail, so no handler polls on. */
  const gates: Int32Array[] = [];
  const newGate = (): Int32Array => {
    const gate = sharedInts(1);
    gates.push(gate);
    return gate;
  };
  beforeEach(() => {
    lanes = kind.executor(2);
  });
  afterEach(async () => {
    for (const gate of gates.splice(0)) Atomics.store(gate, 0, 1);
    subscription?.unsubscribe();
    await lanes.close();
  });

  it('with a slow handler delays only its own messages: the other keys run through, and its own run in order once it speeds up', async () => {
    const gate = newGate();
    const messages: Msg[] = [];
    for (let n = 0; n < 120; n++) {
      // Every other message is the hot key's; the rest spread over 20 cold keys.
      messages.push(n % 2 === 0 ? { key: 'hot', n, gate } : { key: `cold${n % 20}`, n });
    }
    const values: Ran[] = [];
    const stats = new DispatchMetrics();
    subscription = fromIterable(messages)
      .pipe(
        keyedDispatch<Msg, string, Ran>({
          executor: lanes.executor as never,
          key: (m) => m.key,
          handle: kind.handler('slowUntilOpen'),
          maxInFlight: 16,
          maxPerKey: 4,
          maxParked: 64,
          stats,
        }),
      )
      .subscribe((v) => values.push(v));
    // With the window shared by all keys, the hot key's 60 messages would hold all 16 slots: here it holds 4.
    await waitFor(() => values.length === 60, 10_000, 'every cold message to finish while the hot key waits');
    expect(values.every((v) => v.key !== 'hot')).toBe(true);
    expect(stats.backlogOf('hot')).toBe(60);
    // The parking area still has room: intake is not held.
    expect(stats.read().heldBy).toBeNull();
    expect(stats.hotKeys(1)).toEqual([{ key: 'hot', backlog: 60, parked: 56 }]);
    expect(stats.maxInFlightSeen).toBeLessThanOrEqual(16);
    Atomics.store(gate, 0, 1);
    await waitFor(() => values.length === 120, 10_000, 'the hot key to finish');
    const hot = byKey(values).get('hot') ?? [];
    expect(hot.map((v) => v.n)).toEqual(messages.filter((m) => m.key === 'hot').map((m) => m.n));
    for (const [key, list] of byKey(values)) {
      expect(list.map((v) => v.n)).toEqual(messages.filter((m) => m.key === key).map((m) => m.n));
    }
    expect(stats.snapshot()).toMatchObject({ parked: 0, inFlight: 0 });
  });

  it('parks at most `maxParked` messages, then stops asking the receiver for more until parked ones enter the window', async () => {
    const gate = newGate();
    let pulled = 0;
    function* hotAndCold(): Generator<Msg> {
      for (let n = 0; n < 100_000; n++) {
        pulled++;
        yield n % 2 === 0 ? { key: 'hot', n, gate } : { key: `cold${n % 10}`, n };
      }
    }
    const values: Ran[] = [];
    const stats = new DispatchMetrics();
    subscription = fromIterable(hotAndCold())
      .pipe(
        keyedDispatch<Msg, string, Ran>({
          executor: lanes.executor as never,
          key: (m) => m.key,
          handle: kind.handler('slowUntilOpen'),
          maxInFlight: 16,
          maxPerKey: 4,
          maxParked: 8,
          stats,
        }),
      )
      .subscribe((v) => values.push(v));
    // Cold messages finish and more is asked for, until the hot key fills the parking area.
    await waitFor(() => stats.snapshot().parked === 8, 10_000, 'the parking area to fill');
    const pulledWhenFull = pulled;
    await sleep(200);
    expect(pulled).toBe(pulledWhenFull);
    expect(stats.snapshot()).toMatchObject({ parked: 8 });
    expect(stats.backlogOf('hot')).toBe(4 + 8);
    // Intake stopped, and the hot key holds it.
    expect(stats.read().heldBy).toEqual({ key: 'hot', backlog: 12, parked: 8 });
    // Unfinished messages taken from the receiver: its share in the window, the parking area, and cold
    // ones still in the window.
    expect(pulled - values.length).toBeLessThanOrEqual(16 + 8);
    Atomics.store(gate, 0, 1);
    await waitFor(() => values.filter((v) => v.key === 'hot').length >= 40, 10_000, 'the hot key to go on');
    const hot = values.filter((v) => v.key === 'hot').slice(0, 40);
    expect(hot.map((v) => v.n)).toEqual(Array.from({ length: 40 }, (_, i) => 2 * i));
  });

  it('runs each parked message once and in order when the receiver has no parked/unparked hooks', async () => {
    // A receiver's session may leave out `parked` and `unparked`: the messages still leave the parking area.
    const messages: Msg[] = Array.from({ length: 200 }, (_, n) => ({ key: `k${n % 4}`, n }));
    const receiver = new ScriptedReceiver(messages[Symbol.iterator]());
    const values = await lastValueFrom(
      receiver.pipe(
        keyedDispatch<Msg, string, Ran>({
          executor: lanes.executor as never,
          key: (m) => m.key,
          handle: kind.handler('later'),
          maxInFlight: 16,
          maxPerKey: 2,
          maxParked: 64,
        }),
        toArray(),
      ),
    );
    expect(values).toHaveLength(200);
    for (const [key, ran] of byKey(values)) {
      const expected = messages.filter((m) => m.key === key).map((m) => m.n);
      expect(ran.map((v) => v.n)).toEqual(expected);
    }
    expect(receiver.settled).toHaveLength(200);
  });
});
