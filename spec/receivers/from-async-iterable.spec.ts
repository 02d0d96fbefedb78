import { fromAsyncIterable, keyedDispatch } from 'keyed-dispatch';
import { lastValueFrom, toArray } from 'rxjs';

interface Msg {
  k: string;
}

/** An async iterable whose `next()` is `next` after `good` well-formed results. */
function iterableOf(next: () => unknown, good = 1): AsyncIterable<Msg> {
  let calls = 0;
  return {
    [Symbol.asyncIterator]: () => ({
      next: () => (++calls <= good ? Promise.resolve({ done: false, value: { k: `k${calls}` } }) : next()),
    }),
  } as AsyncIterable<Msg>;
}

/** How the output of a dispatch over `iterable` ended, and the messages its key selector was asked about. */
async function dispatchOver(iterable: AsyncIterable<Msg>) {
  const keyed: unknown[] = [];
  const outcome = await lastValueFrom(
    fromAsyncIterable(iterable).pipe(
      keyedDispatch({
        key: (m: Msg) => {
          keyed.push(m);
          return m.k;
        },
        handle: async (m: Msg) => m.k,
      }),
      toArray(),
    ),
  ).then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  return { outcome, keyed };
}

describe('fromAsyncIterable, over an iterator that breaks the protocol', () => {
  it.each([
    ['undefined', undefined, 'undefined'],
    ['null', null, 'null'],
    ['a number', 5, '5 (number)'],
    ['a string', 'x', "'x' (string)"],
  ])(
    'errors the output with a TypeError naming fromAsyncIterable when next() resolves to %s, never the key selector',
    async (_what, result, described) => {
      const { outcome, keyed } = await dispatchOver(iterableOf(() => Promise.resolve(result)));
      expect(outcome).toEqual({ error: expect.any(TypeError) });
      const { message } = (outcome as { error: TypeError }).error;
      expect(message).toContain('fromAsyncIterable');
      expect(message).toContain(`next() resolved to ${described}`);
      expect(keyed).toEqual([{ k: 'k1' }]);
    },
  );

  it.each([
    [
      'throws',
      () => () => {
        throw new Error('cursor lost');
      },
    ],
    ['rejects', () => () => Promise.reject(new Error('cursor lost'))],
    [
      'resolves to a result whose done getter throws',
      () => () =>
        Promise.resolve({
          get done(): boolean {
            throw new Error('cursor lost');
          },
        }),
    ],
    [
      'resolves to a result whose value getter throws',
      () => () =>
        Promise.resolve({
          done: false,
          get value(): Msg {
            throw new Error('cursor lost');
          },
        }),
    ],
  ])(
    "errors the output with the iterator's own error when next() %s, never the key selector",
    async (_what, make) => {
      const { outcome, keyed } = await dispatchOver(iterableOf(make()));
      expect(outcome).toEqual({ error: expect.objectContaining({ message: 'cursor lost' }) });
      expect(keyed).toEqual([{ k: 'k1' }]);
    },
  );
});
