import {
  DispatchStats,
  type FailurePolicy,
  fromIterable,
  KeyedExecutor,
  keyedDispatch,
  retryPolicy,
} from 'keyed-dispatch';
import {
  concatMap,
  delay,
  from,
  lastValueFrom,
  Observable,
  of,
  Subject,
  type Subscription,
  toArray,
} from 'rxjs';
import { type LaneKind, laneKinds, type Msg, type Ran } from '../lanes/lane-kinds';
import { outcomeOf, within } from '../lanes/shared-state';

/** Runs `messages` through `handler` on `kind`'s lanes: its values or its error, within 5 s. */
function run(
  kind: LaneKind,
  executor: LaneKind extends never ? never : unknown,
  handler: string,
  messages: Msg[],
  stats?: DispatchStats,
  failurePolicy?: FailurePolicy<Msg, Ran>,
) {
  return outcomeOf(
    within(
      lastValueFrom(
        fromIterable(messages).pipe(
          keyedDispatch<Msg, unknown, Ran>({
            executor: executor as never,
            key: (m) => m.key,
            handle: kind.handler(handler) as never,
            stats,
            failurePolicy,
          }),
          toArray(),
        ),
      ),
      5000,
      'the output to end',
    ),
  );
}

describe.each(laneKinds)('a handler on %s', (_name, kind) => {
  let lanes: ReturnType<LaneKind['executor']>;
  beforeEach(() => {
    lanes = kind.executor(1);
  });
  afterEach(() => lanes.close());

  it('that returns a thenable calling back synchronously completes its message and goes on with the key', async () => {
    const stats = new DispatchStats();
    const messages = [0, 1, 2].map((n) => ({ key: 'k', n }));
    // One at a time, so the key's mailbox is empty each time its thenable calls back.
    const spaced = from(messages).pipe(concatMap((m) => of(m).pipe(delay(20))));
    const outcome = await outcomeOf(
      within(
        lastValueFrom(
          spaced.pipe(
            keyedDispatch<Msg, unknown, Ran>({
              executor: lanes.executor as never,
              key: (m) => m.key,
              handle: kind.handler('syncThenable') as never,
              stats,
            }),
            toArray(),
          ),
        ),
        5000,
        'the output to end',
      ),
    );
    expect(outcome).toEqual({ value: messages.map((m) => expect.objectContaining({ key: 'k', n: m.n })) });
    expect(stats.snapshot()).toMatchObject({ inFlight: 0, liveMailboxes: 0, settled: 3 });
  });

  it('that returns a thenable whose `then` throws fails its message: the output errors with that error', async () => {
    const outcome = await run(kind, lanes.executor, 'throwingThen', [{ key: 'k', n: 0 }]);
    expect(outcome).toEqual({ error: expect.objectContaining({ message: 'then threw for k' }) });
  });

  it('that returns a native Promise whose `then` throws (its `constructor` throws) fails its message: the output errors with that error', async () => {
    const outcome = await run(kind, lanes.executor, 'throwingSpecies', [{ key: 'k', n: 0 }]);
    expect(outcome).toEqual({ error: expect.objectContaining({ message: 'constructor threw for k' }) });
  });

  it('that returns a native Promise whose `then` throws, under a failure policy, is dead-lettered and the key goes on', async () => {
    const dead: Msg[] = [];
    const messages = [0, 1].map((n) => ({ key: 'k', n }));
    const policy = retryPolicy<Msg, Ran>({ maxAttempts: 2, deadLetter: (m) => void dead.push(m) });
    const outcome = await run(kind, lanes.executor, 'throwingSpecies', messages, undefined, policy);
    expect(outcome).toEqual({ value: [] });
    expect(dead).toEqual(messages);
  });

  it('that returns an Observable whose `subscribe` throws fails its message: the output errors with that error', async () => {
    const outcome = await run(kind, lanes.executor, 'throwingSubscribe', [{ key: 'k', n: 0 }]);
    expect(outcome).toEqual({ error: expect.objectContaining({ message: 'subscribe threw for k' }) });
  });
});

describe('a handler on event-loop lanes', () => {
  it('that returns something other than an ObservableInput for a key with no text form errors with a TypeError saying so', async () => {
    const key = Object.create(null);
    const outcome = await outcomeOf(
      lastValueFrom(fromIterable([1]).pipe(keyedDispatch({ key: () => key, handle: () => 5 as never }))),
    );
    expect(outcome).toEqual({
      error: expect.objectContaining({
        name: 'TypeError',
        message: expect.stringContaining('`handle` returned number for key [object Object]'),
      }),
    });
  });

  it('that returns a Promise subclass calling back synchronously completes its message and goes on with the key', async () => {
    /** A Promise whose `then` calls back at once, inside the call. */
    class EagerPromise<T> extends Promise<T> {
      constructor(private readonly value: T) {
        super(() => undefined);
      }
      // biome-ignore lint/suspicious/noThenProperty: a thenable on purpose.
      override then(resolve?: ((value: T) => unknown) | null): never {
        resolve?.(this.value);
        return undefined as never;
      }
    }
    const stats = new DispatchStats();
    const spaced = from([0, 1, 2]).pipe(concatMap((n) => of(n).pipe(delay(20))));
    const values = await within(
      lastValueFrom(
        spaced.pipe(
          keyedDispatch({ key: () => 'k', handle: (n: number) => new EagerPromise(n), stats }),
          toArray(),
        ),
      ),
      5000,
      'the output to complete',
    );
    expect(values).toEqual([0, 1, 2]);
    expect(stats.snapshot()).toMatchObject({ inFlight: 0, liveMailboxes: 0 });
  });

  it('that returns an old-style Promise subclass (its `constructor` still Promise) calling back synchronously goes on with the key', async () => {
    // A subclass written without `class`: its prototype inherits Promise's `constructor`.
    function EagerPromise(this: unknown, value: number): Promise<number> {
      const promise = Reflect.construct(
        Promise,
        [(resolve: (v: number) => void) => resolve(value)],
        EagerPromise,
      );
      promise.value = value;
      return promise;
    }
    EagerPromise.prototype = Object.create(Promise.prototype);
    // biome-ignore lint/suspicious/noThenProperty: a thenable on purpose.
    EagerPromise.prototype.then = function (this: { value: number }, resolve: (v: number) => unknown) {
      resolve(this.value);
      return this;
    };
    const values = await within(
      lastValueFrom(
        from([1, 2]).pipe(
          keyedDispatch({
            key: () => 'k',
            handle: (n: number) => (EagerPromise as never as (n: number) => Promise<number>)(n),
          }),
          toArray(),
        ),
      ),
      5000,
      'the output to complete',
    );
    expect(values).toEqual([1, 2]);
  });

  it('that returns an object inheriting from a Promise (not one) fails its message with what its `then` threw', async () => {
    const outcome = await outcomeOf(
      within(
        lastValueFrom(
          fromIterable([1]).pipe(
            keyedDispatch({
              key: () => 'k',
              handle: () => Object.create(Promise.resolve(1)) as Promise<number>,
            }),
          ),
        ),
        5000,
        'the output to end',
      ),
    );
    expect(outcome).toEqual({ error: expect.objectContaining({ name: 'TypeError' }) });
  });

  it('with a dead-letter hook that throws errors the output with what it threw', async () => {
    const outcome = await outcomeOf(
      within(
        lastValueFrom(
          fromIterable([1, 2]).pipe(
            keyedDispatch({
              key: (n: number) => n,
              handle: (n: number) => Promise.reject(new Error(`boom ${n}`)),
              failurePolicy: retryPolicy<number, number>({
                maxAttempts: 1,
                deadLetter: () => {
                  throw new Error('dead letter threw');
                },
              }),
            }),
          ),
        ),
        5000,
        'the output to end',
      ),
    );
    expect(outcome).toEqual({ error: expect.objectContaining({ message: 'dead letter threw' }) });
  });

  it('with a dead-letter hook that returns a number or a boolean ignores what it returned and goes on', async () => {
    const dead: number[] = [];
    const values = await within(
      lastValueFrom(
        fromIterable([1, 2, 3, 4]).pipe(
          keyedDispatch({
            key: (n: number) => n % 2,
            handle: (n: number) => (n === 4 ? [n] : Promise.reject(new Error(`boom ${n}`))),
            failurePolicy: retryPolicy<number, number>({
              maxAttempts: 1,
              deadLetter: ((n: number) => {
                dead.push(n);
                return n === 1 ? 1 : true;
              }) as never,
            }),
          }),
          toArray(),
        ),
      ),
      5000,
      'the output to complete',
    );
    expect(values).toEqual([4]);
    expect(dead.sort()).toEqual([1, 2, 3]);
  });
});

/**
 * A handler that stops its dispatcher (it unsubscribes the output, or errors the source) and returns an
 * Observable all the same. Event-loop lanes only: a handler on a thread cannot reach the output.
 */
describe('a handler that stops its dispatcher, then returns an Observable', () => {
  let executor: KeyedExecutor;
  const intervals: Array<ReturnType<typeof setInterval>> = [];
  beforeEach(() => {
    executor = new KeyedExecutor({ lanes: 2 });
  });
  afterEach(async () => {
    for (const t of intervals.splice(0)) clearInterval(t);
    await executor.close();
  });

  /** An Observable ticking every millisecond until unsubscribed; `state` counts both. */
  function ticking(state: { subscribed: number; unsubscribed: number }): Observable<number> {
    return new Observable<number>((subscriber) => {
      state.subscribed++;
      const timer = setInterval(() => subscriber.next(1), 1);
      intervals.push(timer);
      return () => {
        state.unsubscribed++;
        clearInterval(timer);
      };
    });
  }

  const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

  it.each([
    ['', undefined],
    [' under a failure policy', retryPolicy<Msg, string>()],
  ])(
    'by unsubscribing the output%s: what it returned is never left running',
    async (_under, failurePolicy) => {
      const state = { subscribed: 0, unsubscribed: 0 };
      const source = new Subject<Msg>();
      const subscription: Subscription = source
        .pipe(
          keyedDispatch({
            executor,
            key: (m: Msg) => m.key,
            failurePolicy,
            handle: () => {
              subscription.unsubscribe();
              return ticking(state);
            },
          }),
        )
        .subscribe();
      source.next({ key: 'a', n: 1 });
      await settle();
      expect(state.subscribed).toBe(state.unsubscribed);
    },
  );

  it('by unsubscribing the output, then rejecting: its rejection is not left unhandled', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const source = new Subject<Msg>();
      const subscription: Subscription = source
        .pipe(
          keyedDispatch({
            executor,
            key: (m: Msg) => m.key,
            handle: async () => {
              subscription.unsubscribe();
              throw new Error('after the unsubscribe');
            },
          }),
        )
        .subscribe();
      source.next({ key: 'a', n: 1 });
      await settle();
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it("by erroring the source: the output errors with the source's error, and what it returned is never left running", async () => {
    const state = { subscribed: 0, unsubscribed: 0 };
    const source = new Subject<Msg>();
    let error: unknown;
    source
      .pipe(
        keyedDispatch({
          executor,
          key: (m: Msg) => m.key,
          handle: () => {
            source.error(new Error('upstream broke'));
            return ticking(state);
          },
        }),
      )
      .subscribe({ error: (e) => (error = e) });
    source.next({ key: 'a', n: 1 });
    await settle();
    expect(error).toEqual(new Error('upstream broke'));
    expect(state.subscribed).toBe(state.unsubscribed);
  });
});
