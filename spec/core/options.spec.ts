import { DispatchStats, KeyedExecutor, keyedDispatch } from 'keyed-dispatch';
import { EMPTY, Subject } from 'rxjs';
import { ScriptedReceiver } from '../support/scripted-receiver';

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

  it('throws for a maxPerKey above maxInFlight, naming maxInFlight as its bound', () => {
    expect(() => keyedDispatch({ ...valid, maxInFlight: 8, maxPerKey: 9 })).toThrow(
      new TypeError(
        'keyedDispatch: expected `maxPerKey` to be an integer from 1 to 8 (`maxInFlight`), got 9 (number)',
      ),
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

  it('throws for an executor with an invalid lane count', () => {
    expect(() => new KeyedExecutor({ lanes: 0 })).toThrow(
      new TypeError('KeyedExecutor: expected `lanes` to be an integer from 1 to 1024, got 0 (number)'),
    );
  });

  it('uses the documented defaults', () => {
    const receiver = new ScriptedReceiver((function* () {})());
    receiver.pipe(keyedDispatch(valid)).subscribe();
    expect(receiver.requests).toEqual([256]);
  });

  it('shares the window 64 per key and parks up to 65,536 messages by default, or maxInFlight when it is larger', () => {
    const snapshotOf = (options: { maxInFlight?: number }) => {
      const stats = new DispatchStats();
      const subscription = new Subject<string>()
        .pipe(keyedDispatch({ ...valid, ...options, stats }))
        .subscribe();
      const snapshot = stats.snapshot();
      subscription.unsubscribe();
      return snapshot;
    };
    expect(snapshotOf({})).toMatchObject({ maxInFlight: 256, maxPerKey: 64, maxParked: 65_536 });
    expect(snapshotOf({ maxInFlight: 8 })).toMatchObject({ maxPerKey: 2, maxParked: 65_536 });
    expect(snapshotOf({ maxInFlight: 100_000 })).toMatchObject({ maxPerKey: 25_000, maxParked: 100_000 });
  });
});
