import { ExecutorClosedError, fromIterable, keyedDispatch } from 'keyed-dispatch';
import { lastValueFrom, toArray } from 'rxjs';
import { ScriptedReceiver } from '../support/scripted-receiver';
import { sleep, waitFor } from '../support/waits';
import { type LaneKind, laneKinds, type Msg, type Ran } from './lane-kinds';
import { HeldBoard, outcomeOf, within } from './shared-state';

/**
 * `count` messages over `keys` keys for the `held` fixture: each counts its start, then waits for the
 * board's release. On thread lanes the wait blocks the thread (a busy thread, deaf to its port); on
 * event-loop lanes it waits on timers, leaving the lane free.
 */
function heldMessages(kind: LaneKind, board: HeldBoard, keys: number): Msg[] {
  return Array.from({ length: board.messages }, (_, n) => ({
    key: `k${n % keys}`,
    n,
    starts: board.starts,
    release: board.release,
    block: kind.threads,
  }));
}

describe.each(laneKinds)('on %s', (_name, kind) => {
  let lanes: ReturnType<LaneKind['executor']> | undefined;
  let board: HeldBoard | undefined;
  afterEach(async () => {
    board?.open();
    board = undefined;
    await lanes?.close();
    lanes = undefined;
  });

  describe.each([
    ['one key', 1],
    ['several keys', 4],
  ])('with 20 messages over %s on one lane', (_keys, keys) => {
    it('starts no message once the output is unsubscribed', async () => {
      lanes = kind.executor(1);
      board = new HeldBoard(20);
      const errors: unknown[] = [];
      const subscription = fromIterable(heldMessages(kind, board, keys))
        .pipe(
          keyedDispatch<Msg, string, Ran>({
            executor: lanes.executor,
            key: (m) => m.key,
            handle: kind.handler('held'),
          }),
        )
        .subscribe({ error: (err: unknown) => errors.push(err) });
      const held = board;
      await waitFor(() => held.started >= 1, 10_000, 'the first message to start');
      subscription.unsubscribe();
      const startedWhenCancelled = board.started;
      // The running handler finishes; whatever would start after it has time to.
      board.open();
      await sleep(300);
      expect(board.started).toBe(startedWhenCancelled);
      expect(errors).toEqual([]);
    });

    it('starts no message once the executor is closed', async () => {
      lanes = kind.executor(1);
      board = new HeldBoard(20);
      const run = outcomeOf(
        lastValueFrom(
          fromIterable(heldMessages(kind, board, keys)).pipe(
            keyedDispatch<Msg, string, Ran>({
              executor: lanes.executor,
              key: (m) => m.key,
              handle: kind.handler('held'),
            }),
          ),
        ),
      );
      const held = board;
      await waitFor(() => held.started >= 1, 10_000, 'the first message to start');
      const closing = lanes.close();
      const startedWhenClosed = board.started;
      board.open();
      await within(closing, 10_000, 'the executor to close');
      await sleep(300);
      expect(board.started).toBe(startedWhenClosed);
      expect(await within(run, 10_000, 'the output to end')).toEqual({
        error: expect.any(ExecutorClosedError),
      });
    });
  });

  it('takes queued messages of a running key out with `discard`: returned, never started, never settled', async () => {
    lanes = kind.executor(1);
    board = new HeldBoard(5);
    const receiver = new ScriptedReceiver(heldMessages(kind, board, 1)[Symbol.iterator]());
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch<Msg, string, Ran>({
          executor: lanes.executor,
          key: (m) => m.key,
          handle: kind.handler('held'),
        }),
        toArray(),
      ),
    );
    const held = board;
    await waitFor(() => held.started >= 1, 10_000, 'the first message to start');
    const discarded = receiver.sink?.discard(() => true) ?? [];
    board.open();
    const values = await within(output, 10_000, 'the output to complete');
    await sleep(300);
    expect(discarded.map((m) => m.n)).toEqual([1, 2, 3, 4]);
    expect([0, 1, 2, 3, 4].map((n) => held.startsOf(n))).toEqual([1, 0, 0, 0, 0]);
    expect(values.map((v) => v.n)).toEqual([0]);
    expect(receiver.settled.map((s) => `${s.message.n}:${s.outcome}`)).toEqual(['0:done']);
  });
});
