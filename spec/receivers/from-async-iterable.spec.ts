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

describe('fromAsyncIterable, given something that is not an async iterable', () => {
  it.each([
    ['a number', 5, '5 (number)'],
    ['an array (a sync iterable)', [1], 'an array (object)'],
    ['null', null, 'null'],
  ])('throws a TypeError naming fromAsyncIterable when given %s', (_what, iterable, described) => {
    expect(() => fromAsyncIterable(iterable as never)).toThrow(
      new TypeError(
        `fromAsyncIterable: expected an async iterable (an object with a [Symbol.asyncIterator] method), got ${described}`,
      ),
    );
  });

  it('errors the output with a TypeError naming fromAsyncIterable when [Symbol.asyncIterator]() returns no iterator', async () => {
    const { outcome, keyed } = await dispatchOver({ [Symbol.asyncIterator]: () => undefined } as never);
    expect(outcome).toEqual({
      error: new TypeError(
        'fromAsyncIterable: [Symbol.asyncIterator]() returned undefined; expected an async iterator, an object with a next() method',
      ),
    });
    expect(keyed).toEqual([]);
  });
});
