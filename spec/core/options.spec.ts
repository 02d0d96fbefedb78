import { KeyedExecutor, keyedDispatch } from 'keyed-dispatch';
import { EMPTY } from 'rxjs';

const valid = { key: (m: string) => m, handle: () => EMPTY };

describe('keyedDispatch options', () => {
  it('throws at call time naming maxInFlight, its value and its type', () => {
    expect(() => keyedDispatch({ ...valid, maxInFlight: 0 })).toThrow(
      new TypeError('keyedDispatch: expected `maxInFlight` to be an integer >= 1, got 0 (number)'),
    );
    expect(() => keyedDispatch({ ...valid, maxInFlight: '8' as never })).toThrow(
      /`maxInFlight`.*'8' \(string\)/,
    );
  });

  it('throws for a throughput that is not an integer', () => {
    expect(() => keyedDispatch({ ...valid, throughput: 1.5 })).toThrow(
      new TypeError('keyedDispatch: expected `throughput` to be an integer >= 1, got 1.5 (number)'),
    );
  });

  it('throws for a key selector that is not a function', () => {
    expect(() => keyedDispatch({ ...valid, key: 'id' as never })).toThrow(
      new TypeError("keyedDispatch: expected `key` to be a function, got 'id' (string)"),
    );
    expect(() => keyedDispatch({ ...valid, handle: undefined as never })).toThrow(
      /`handle` to be a function, got undefined/,
    );
  });

  it('throws for an unknown onOverflow policy', () => {
    expect(() => keyedDispatch({ ...valid, onOverflow: 'drop' as never })).toThrow(
      /`onOverflow`.*'drop' \(string\)/,
    );
  });

  it('throws for an executor with an invalid worker count', () => {
    expect(() => new KeyedExecutor({ workers: 0 })).toThrow(
      new TypeError('KeyedExecutor: expected `workers` to be an integer from 1 to 1024, got 0 (number)'),
    );
  });

  it('uses the documented defaults', async () => {
    const { ScriptedReceiver } = await import('../support/scripted-receiver');
    const receiver = new ScriptedReceiver((function* () {})());
    receiver.pipe(keyedDispatch(valid)).subscribe();
    expect(receiver.requests).toEqual([256]);
  });
});
