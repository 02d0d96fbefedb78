import {
  fromIterable,
  KeyedExecutor,
  keyedDispatch,
  openReceiver,
  Receiver,
  type ReceiverSession,
  type ReceiverSink,
} from 'keyed-dispatch';
import { lastValueFrom, Subject, type Subscription, takeUntil, toArray } from 'rxjs';
import { type LaneKind, laneKinds, type Msg, type Ran } from '../lanes/lane-kinds';
import { outcomeOf, within } from '../lanes/shared-state';
import { sleep } from '../support/waits';

/**
 * A receiver of `messages` with hooks that misbehave on demand: `cancel` throws, or the receiver goes
 * on signalling after it completed.
 */
class OddReceiver extends Receiver<Msg> {
  cancels = 0;
  constructor(
    private readonly messages: Msg[],
    private readonly odd: { cancelThrows?: boolean; errorAfterComplete?: boolean; holdOpen?: boolean },
  ) {
    super();
  }

  [openReceiver](sink: ReceiverSink<Msg>): ReceiverSession<Msg> {
    let sent = 0;
    return {
      request: (n) => {
        for (let i = 0; i < n && sent < this.messages.length; i++) sink.next(this.messages[sent++]);
        if (sent === this.messages.length && !this.odd.holdOpen) {
          sink.complete();
          if (this.odd.errorAfterComplete) {
            sink.error(new Error('late error'));
            sink.next({ key: 'late', n: 99 });
          }
        }
      },
      settle: () => undefined,
      cancel: () => {
        this.cancels++;
        if (this.odd.cancelThrows) throw new Error(`cancel threw (${this.cancels})`);
      },
    };
  }
}

function dispatch(kind: LaneKind, executor: unknown, source: Receiver<Msg>, handler = 'echo') {
  return source.pipe(
    keyedDispatch<Msg, string, Ran>({
      executor: executor as never,
      key: (m) => m.key,
      handle: kind.handler(handler),
    }),
  );
}

const two: Msg[] = [
  { key: 'a', n: 0 },
  { key: 'b', n: 1 },
];

describe.each(laneKinds)('on %s', (_name, kind) => {
  let lanes: ReturnType<LaneKind['executor']>;
  beforeEach(() => {
    lanes = kind.executor(1);
  });
  afterEach(async () => {
    await lanes.close().catch(() => undefined);
  });

  it('errors the output with what a throwing `onSettled` threw, instead of stalling the key', async () => {
    const outcome = await outcomeOf(
      within(
        lastValueFrom(
          fromIterable(two, {
            onSettled: () => {
              throw new Error('onSettled threw');
            },
          }).pipe(
            keyedDispatch<Msg, string, Ran>({
              executor: lanes.executor as never,
              key: (m) => m.key,
              handle: kind.handler('echo'),
            }),
            toArray(),
          ),
        ),
        5000,
        'the output to end',
      ),
    );
    expect(outcome).toEqual({ error: expect.objectContaining({ message: 'onSettled threw' }) });
  });

  it("errors the output with what the receiver's `cancel` threw when it ends, instead of completing", async () => {
    const receiver = new OddReceiver(two, { cancelThrows: true });
    const outcome = await outcomeOf(
      within(
        lastValueFrom(dispatch(kind, lanes.executor, receiver).pipe(toArray())),
        5000,
        'the output to end',
      ),
    );
    expect(outcome).toEqual({ error: expect.objectContaining({ message: 'cancel threw (1)' }) });
  });

  it("throws what the receiver's `cancel` threw from unsubscribe, after stopping everything", async () => {
    const receiver = new OddReceiver(two, { cancelThrows: true, holdOpen: true });
    const subscription: Subscription = dispatch(kind, lanes.executor, receiver).subscribe({
      error: () => undefined,
    });
    await sleep(50);
    expect(() => subscription.unsubscribe()).toThrow(/cancel threw \(1\)/);
    expect(subscription.closed).toBe(true);
  });

  it('ignores what a receiver signals after it completed, as RxJS does', async () => {
    const receiver = new OddReceiver(two, { errorAfterComplete: true });
    const values = await within(
      lastValueFrom(dispatch(kind, lanes.executor, receiver, 'later').pipe(toArray())),
      5000,
      'the output to complete',
    );
    expect(values.map((v) => v.n).sort()).toEqual([0, 1]);
  });

  it('stops every dispatcher when closing, even when a receiver throws on cancel, then rejects with all errors together', async () => {
    const errors: unknown[] = [];
    const receivers = [0, 1, 2].map(
      (i) => new OddReceiver([{ key: `k${i}`, n: i }], { cancelThrows: i !== 1, holdOpen: true }),
    );
    for (const receiver of receivers)
      dispatch(kind, lanes.executor, receiver, 'later').subscribe({ error: (err) => errors.push(err) });
    await sleep(100);
    const closing = await outcomeOf(lanes.close());
    expect(closing).toEqual({ error: expect.any(AggregateError) });
    const failure = (closing as { error: AggregateError }).error;
    expect(failure.errors.map((e: Error) => e.message)).toEqual(['cancel threw (1)', 'cancel threw (1)']);
    expect(receivers.map((r) => r.cancels)).toEqual([1, 1, 1]);
    expect(errors).toHaveLength(3);
    for (const err of errors) expect((err as Error).message).toContain(`${kind.executorName} was closed`);
  });
});

describe('on event-loop lanes', () => {
  // Only event-loop lanes start a refill's message right inside the admission (see `Mailbox.post`).
  it('starts no handler for a message whose key selector stopped the output, in the refill of a finished one', async () => {
    const stop = new Subject<void>();
    const handled: number[] = [];
    const executor = new KeyedExecutor({ lanes: 1 });
    try {
      const values = await within(
        lastValueFrom(
          fromIterable([0, 1, 2, 3]).pipe(
            keyedDispatch<number, string, number>({
              executor,
              maxInFlight: 1,
              key: (n) => {
                if (n === 1) stop.next();
                return `k${n}`;
              },
              handle: async (n) => {
                handled.push(n);
                return n;
              },
            }),
            takeUntil(stop),
            toArray(),
          ),
        ),
        5000,
        'the output to complete',
      );
      expect(values).toEqual([0]);
      expect(handled).toEqual([0]);
    } finally {
      await executor.close();
    }
  });

  it('keeps running when an `onLongTurn` listener throws: the listener is dropped with a process warning', async () => {
    const emitWarning = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const executor = new KeyedExecutor({
      lanes: 1,
      longTurnMs: 5,
      onLongTurn: () => {
        throw new Error('listener threw');
      },
    });
    try {
      const values = await within(
        lastValueFrom(
          fromIterable([0, 1, 2].map((n) => ({ key: 'k', n, spinMs: 10 }))).pipe(
            keyedDispatch<Msg, string, Ran>({
              executor,
              key: (m) => m.key,
              handle: require('../fixtures/lane-handlers.js').spin,
            }),
            toArray(),
          ),
        ),
        5000,
        'the output to complete',
      );
      expect(values.map((v) => v.n)).toEqual([0, 1, 2]);
      expect(emitWarning.mock.calls).toEqual([
        [
          expect.stringContaining('onLongTurn failed and is no longer called: Error: listener threw'),
          expect.anything(),
        ],
      ]);
    } finally {
      emitWarning.mockRestore();
      await executor.close();
    }
  });
});

interface Item {
  key: string;
  id: string;
}

/**
 * A session written against `ReceiverSession` alone: `request(n)` hands over up to `n` messages and
 * records each as pending once `sink.next` returns; `settle` clears it.
 */
class ListSessionOfItsOwn implements ReceiverSession<Item> {
  readonly pending = new Set<string>();
  readonly startedInsideRequest: string[] = [];
  private requesting = false;
  private next = 0;
  constructor(
    private readonly sink: ReceiverSink<Item>,
    private readonly messages: Item[],
  ) {}
  request(n: number): void {
    this.requesting = true;
    for (let i = 0; i < n && this.next < this.messages.length; i++) {
      const m = this.messages[this.next++] as Item;
      this.sink.next(m);
      this.pending.add(m.id);
    }
    this.requesting = false;
    if (this.next === this.messages.length) this.sink.complete();
  }
  settle(m: Item): void {
    this.pending.delete(m.id);
  }
  cancel(): void {}
  started(m: Item): void {
    if (this.requesting) this.startedInsideRequest.push(m.id);
  }
}

describe('a receiver session of its own (ReceiverSession, not PullSession)', () => {
  it('is never re-entered by a handler from inside its request, and every message it delivered settles after it recorded it', async () => {
    const ids = ['A1', 'A2', 'B1', 'C1', 'D1', 'E1'];
    let session: ListSessionOfItsOwn | undefined;
    const receiver = new (class extends Receiver<Item> {
      [openReceiver](sink: ReceiverSink<Item>): ReceiverSession<Item> {
        session = new ListSessionOfItsOwn(
          sink,
          ids.map((id) => ({ key: id[0] as string, id })),
        );
        return session;
      }
    })();
    const values = await within(
      lastValueFrom(
        receiver.pipe(
          keyedDispatch({
            executor: new KeyedExecutor({ lanes: 1 }),
            maxInFlight: 2,
            maxPerKey: 2,
            key: (m: Item) => m.key,
            handle: async (m: Item) => {
              session?.started(m);
              return m.id;
            },
          }),
          toArray(),
        ),
      ),
      5000,
      'the output to complete',
    );
    expect([...values].sort()).toEqual([...ids].sort());
    expect(session?.startedInsideRequest).toEqual([]);
    expect([...(session?.pending ?? [])]).toEqual([]);
  });
});
