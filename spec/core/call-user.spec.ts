import { callUser, THREW } from '../../src/internal/call-user';

describe('callUser', () => {
  it('returns what the function returned and reports nothing when it succeeds', () => {
    const errors: unknown[] = [];
    expect(
      callUser(
        (a: number, b: number, c: number) => a + b + c,
        1,
        2,
        3,
        (e) => errors.push(e),
      ),
    ).toBe(6);
    expect(errors).toEqual([]);
  });

  it('routes a synchronous throw to onError and returns THREW', () => {
    const errors: unknown[] = [];
    const boom = new Error('boom');
    const result = callUser(
      () => {
        throw boom;
      },
      undefined,
      undefined,
      undefined,
      (e) => errors.push(e),
    );
    expect(result).toBe(THREW);
    expect(errors).toEqual([boom]);
  });

  it('routes the rejection of a returned promise to onError, so it is never unhandled', async () => {
    const errors: unknown[] = [];
    const boom = new Error('late');
    const result = callUser(
      async () => Promise.reject(boom),
      undefined,
      undefined,
      undefined,
      (e) => errors.push(e),
    );
    expect(result).toBeInstanceOf(Promise);
    await new Promise((resolve) => setImmediate(resolve));
    expect(errors).toEqual([boom]);
  });

  it('routes a thenable whose then throws to onError, once', () => {
    const errors: unknown[] = [];
    const broken = {
      // biome-ignore lint/suspicious/noThenProperty: a misbehaving thenable is what is tested.
      then() {
        throw new Error('broken then');
      },
    };
    callUser(
      () => broken,
      undefined,
      undefined,
      undefined,
      (e) => errors.push(e),
    );
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe('broken then');
  });
});
