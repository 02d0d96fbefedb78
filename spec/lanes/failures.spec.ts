import { ExecutorClosedError, fromIterable, keyedDispatch } from 'keyed-dispatch';
import { lastValueFrom } from 'rxjs';
import { sleep, waitFor } from '../support/waits';
import { type LaneKind, laneKinds, type Msg, type Ran } from './lane-kinds';
import { HeldBoard, outcomeOf, sharedInts, within } from './shared-state';

describe.each(laneKinds)('on %s', (_name, kind) => {
  let lanes: ReturnType<LaneKind['executor']> | undefined;
  afterEach(async () => {
    await lanes?.close();
    lanes = undefined;
  });

  it('never runs two handlers of one key at once, even after a handler rejects with messages queued behind it', async () => {
    lanes = kind.executor(1);
    // [0]: handlers of the key running now, [1]: most seen at once, [2]: starts.
    const live = sharedInts(3);
    const messages: Msg[] = Array.from({ length: 6 }, (_, n) => ({ key: 'k', n, live, reject: n === 0 }));
    const run = lastValueFrom(
      fromIterable(messages).pipe(
        keyedDispatch<Msg, string, Ran>({
          executor: lanes.executor,
          key: (m) => m.key,
          handle: kind.handler('overlapping'),
        }),
      ),
    );
    // No failure policy: the rejection errors the output.
    await expect(within(run, 10_000, 'the output to end')).rejects.toThrow('rejected k 0');
    // Whatever still runs for the key after the failure has time to start.
    await sleep(300);
    expect(Atomics.load(live, 1)).toBe(1);
  });

  it(`errors a dispatcher still running when its executor closes with ExecutorClosedError saying '${kind.executorName} was closed'`, async () => {
    lanes = kind.executor(1);
    const board = new HeldBoard(1);
    try {
      const run = outcomeOf(
        lastValueFrom(
          fromIterable<Msg>([{ key: 'a', n: 0, starts: board.starts, release: board.release }]).pipe(
            keyedDispatch<Msg, string, Ran>({
              executor: lanes.executor,
              key: (m) => m.key,
              handle: kind.handler('held'),
            }),
          ),
        ),
      );
      await waitFor(() => board.started === 1, 10_000, 'the handler to start');
      await within(lanes.close(), 10_000, 'the executor to close');
      const outcome = await within(run, 10_000, 'the output to end');
      expect(outcome).toEqual({ error: expect.any(ExecutorClosedError) });
      const error = (outcome as { error: Error }).error;
      expect(error.message).toContain(`${kind.executorName} was closed`);
    } finally {
      board.open();
    }
  });
});
