import {
  type FailureContext,
  fromIterable,
  keyedBatchDispatch,
  MessageError,
  retryPolicy,
} from 'keyed-dispatch';
import { lastValueFrom, type Observable, toArray } from 'rxjs';
import { outcomeOf, within } from '../lanes/shared-state';
import { batchLaneKinds, type Item, items, onOneLane, type Stored, settlementLog } from './journal';
import { listReceiver } from './list-receiver';

describe.each(batchLaneKinds)('a failed batch on %s', (_name, kind) => {
  const lane = onOneLane(kind);

  function dispatch(
    source: Observable<Item>,
    failurePolicy?: ReturnType<typeof retryPolicy<Item, string>>,
    key: (m: Item) => string = (m) => m.key,
  ) {
    return outcomeOf(
      within(
        lastValueFrom(
          source.pipe(
            keyedBatchDispatch<Item, string, Stored>({
              executor: lane.executor,
              key,
              handle: kind.handler('store'),
              failurePolicy,
            }),
            toArray(),
          ),
        ),
        20_000,
        'the output to end',
      ),
    );
  }

  it("without a policy errors the output as a handler's error does, naming the key and where the batch's first message came from", async () => {
    const { journal } = lane;
    const settled: string[] = [];
    const messages = [...items(journal, 'a', 0, 3), { key: 'a', id: 3, journal, poison: true }];
    const outcome = await dispatch(listReceiver(messages, settled));
    expect(outcome).toEqual({ error: expect.any(MessageError) });
    const error = (outcome as { error: MessageError }).error;
    expect(error.key).toBe('a');
    expect(error.source).toBe("list 'spec' position 0");
    expect(error.cause).toEqual(expect.objectContaining({ message: 'poison message 3' }));
    expect(error.message).toBe(
      "keyedDispatch: the message of key a of list 'spec' position 0 failed: Error: poison message 3",
    );
    expect(settled).toEqual(['0 failed']);
  });

  it('with retryPolicy is retried as a batch', async () => {
    const { journal } = lane;
    const { log, onSettled } = settlementLog();
    const messages = items(journal, 'a', 0, 4).map((m) => (m.id === 1 ? { ...m, failRuns: 1 } : m));
    const outcome = await dispatch(
      fromIterable(messages, { onSettled }),
      retryPolicy({ maxAttempts: 3, backoff: { initialMs: 1, jitter: 0 } }),
    );
    expect(journal.ids()).toEqual([
      [0, 1, 2, 3],
      [0, 1, 2, 3],
    ]);
    expect(outcome).toEqual({ value: [expect.objectContaining({ key: 'a', ids: [0, 1, 2, 3] })] });
    expect(log).toEqual(['0 done', '1 done', '2 done', '3 done']);
  });

  it('with retryPolicy, once its attempts are spent, is taken apart: one poison message in a batch of 64, 63 handled, 1 dead-lettered, order kept', async () => {
    const { journal } = lane;
    const { log, onSettled } = settlementLog();
    const messages = items(journal, 'a', 0, 64).map((m) => (m.id === 17 ? { ...m, poison: true } : m));
    const deadLettered: Array<{
      id: number;
      error: string;
      context: FailureContext<string>;
      callsSoFar: number;
    }> = [];
    const outcome = await dispatch(
      fromIterable(messages, { onSettled }),
      retryPolicy({
        maxAttempts: 2,
        backoff: { initialMs: 1, jitter: 0 },
        deadLetter: (m, error, context) => {
          deadLettered.push({ id: m.id, error: String(error), context, callsSoFar: journal.ids().length });
        },
      }),
    );
    const single = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => [from + i]);
    // The batch twice, then each message alone, in order: 17 twice (its own attempts), the others once.
    expect(journal.ids()).toEqual([
      messages.map((m) => m.id),
      messages.map((m) => m.id),
      ...single(0, 17),
      [17],
      [17],
      ...single(18, 64),
    ]);
    // The dead letter ran before message 18 started: 2 batch runs, 17 single ones, 17's two.
    expect(deadLettered).toEqual([
      {
        id: 17,
        error: 'Error: poison message 17',
        context: { key: 'a', attempts: 2, laneIndex: 0 },
        callsSoFar: 21,
      },
    ]);
    const handled = messages.filter((m) => m.id !== 17).map((m) => m.id);
    expect(outcome).toEqual({ value: handled.map((id) => expect.objectContaining({ key: 'a', ids: [id] })) });
    expect(log).toEqual(messages.map((m) => `${m.id} ${m.id === 17 ? 'dead-lettered' : 'done'}`));
  });

  it('with retryPolicy is taken apart at once when the policy does not retry its error', async () => {
    const { journal } = lane;
    const { log, onSettled } = settlementLog();
    const messages = items(journal, 'a', 0, 4).map((m) => (m.id === 2 ? { ...m, poison: true } : m));
    const outcome = await dispatch(
      fromIterable(messages, { onSettled }),
      retryPolicy({
        maxAttempts: 5,
        backoff: { initialMs: 1, jitter: 0 },
        retryable: (error) => !String(error).includes('poison'),
      }),
    );
    expect(journal.ids()).toEqual([[0, 1, 2, 3], [0], [1], [2], [3]]);
    expect(outcome).toEqual({ value: [0, 1, 3].map((id) => expect.objectContaining({ ids: [id] })) });
    // No dead letter: the poison message is settled failed, for its receiver's onFailed to decide.
    expect(log).toEqual(['0 done', '1 done', '2 failed', '3 done']);
  });

  it('with retryPolicy whose retryable returns something other than a boolean errors the output naming retryable and the key', async () => {
    const { journal } = lane;
    const { log, onSettled } = settlementLog();
    const messages = items(journal, 'a', 0, 2).map((m) => ({ ...m, poison: true }));
    const outcome = await dispatch(
      fromIterable(messages, { onSettled }),
      retryPolicy({ maxAttempts: 5, retryable: (() => 1) as never }),
    );
    expect(outcome).toEqual({
      error: new TypeError(
        'retryPolicy: `retryable` returned 1 (number) for key a; expected a boolean (it is asked synchronously: an async function returns a Promise)',
      ),
    });
    expect(log).not.toContainEqual(expect.stringMatching(/done$/));
  });

  it('with retryPolicy whose dead letter throws for a message of a batch taken apart errors the output naming that message; those handled before it are settled, those after it not', async () => {
    const { journal } = lane;
    const settled: string[] = [];
    const messages = items(journal, 'a', 0, 4).map((m) => (m.id === 2 ? { ...m, poison: true } : m));
    const outcome = await dispatch(
      listReceiver(messages, settled),
      retryPolicy({
        maxAttempts: 1,
        deadLetter: () => {
          throw new Error('dead letter down');
        },
      }),
    );
    expect(journal.ids()).toEqual([[0, 1, 2, 3], [0], [1], [2]]);
    expect(outcome).toEqual({ error: expect.any(MessageError) });
    const error = (outcome as { error: MessageError }).error;
    expect(error.key).toBe('a');
    expect(error.source).toBe("list 'spec' position 2");
    expect(error.cause).toEqual(new Error('dead letter down'));
    expect(settled).toEqual(['0 done', '1 done', '2 failed']);
  });

  it('with retryPolicy sends a message whose key selector failed to the dead letter, and handles the others', async () => {
    const { journal } = lane;
    const { log, onSettled } = settlementLog();
    const dead: Array<[number, unknown]> = [];
    const outcome = await dispatch(
      fromIterable(items(journal, 'a', 0, 4), { onSettled }),
      retryPolicy({
        maxAttempts: 2,
        deadLetter: (m, _error, context) => void dead.push([m.id, context.key]),
      }),
      (m) => {
        if (m.id === 1) throw new Error('no key');
        return m.key;
      },
    );
    expect(dead).toEqual([[1, undefined]]);
    expect(journal.ids()).toEqual([[0, 2, 3]]);
    expect(outcome).toEqual({ value: [expect.objectContaining({ ids: [0, 2, 3] })] });
    expect([...log].sort()).toEqual(['0 done', '1 dead-lettered', '2 done', '3 done']);
  });
});
