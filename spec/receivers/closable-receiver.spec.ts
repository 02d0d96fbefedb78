import { ClosableReceiver, keyedDispatch } from 'keyed-dispatch';
import { lastValueFrom, toArray } from 'rxjs';
import { Gates } from '../support/scripted-receiver';
import { ListSession } from './list-session';

/** A closable receiver whose subscriptions are list sessions the spec fills. */
function closableLists(closeTimeoutMs = 60_000) {
  const sessions: ListSession[] = [];
  const receiver = new ClosableReceiver<string>((sink) => {
    const session = new ListSession(sink);
    sessions.push(session);
    return session;
  }, closeTimeoutMs);
  return { receiver, sessions };
}

describe('ClosableReceiver', () => {
  it('close() lets every subscription finish what it delivered, then completes their outputs and closes them, once', async () => {
    const { receiver, sessions } = closableLists();
    const gates = new Gates();
    const dispatch = keyedDispatch({
      key: (m: string) => m[0],
      handle: (m: string) => gates.open().then(() => m),
    });
    const outputs = [receiver, receiver].map((r) => lastValueFrom(r.pipe(dispatch, toArray())));
    sessions[0]!.push('a1', 'b1');
    sessions[1]!.push('c1');
    let closed = false;
    const close = receiver.close();
    const closing = close.then(() => {
      closed = true;
    });
    sessions[0]!.push('a2');
    expect(gates.size).toBe(3);
    gates.release();
    gates.release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    gates.release();
    await closing;
    expect(await Promise.all(outputs)).toEqual([['a1', 'b1'], ['c1']]);
    expect(sessions.map((s) => s.calls.filter((c) => c === 'close'))).toEqual([['close'], ['close']]);
    expect(receiver.close()).toBe(close);
  });

  it('completes a subscription opened after close() at once', async () => {
    const { receiver } = closableLists();
    await receiver.close();
    const output = receiver.pipe(
      keyedDispatch({ key: (m: string) => m, handle: async (m: string) => m }),
      toArray(),
    );
    expect(await lastValueFrom(output)).toEqual([]);
  });
});
