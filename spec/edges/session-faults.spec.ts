import {
  keyedDispatch,
  openReceiver,
  Receiver,
  type ReceiverSession,
  type ReceiverSink,
  type Settlement,
} from 'keyed-dispatch';
import { lastValueFrom, toArray } from 'rxjs';
import { type LaneKind, laneKinds, type Msg, type Ran } from '../lanes/lane-kinds';
import { outcomeOf, within } from '../lanes/shared-state';

/** What a session of its own may do wrong; each hook throws `fault` when asked to. */
interface Faults {
  settleThrows?: Settlement;
  requestThrowsAfter?: number;
  describeThrows?: boolean;
  unparkedThrows?: boolean;
  /** Ends the source while it is being opened, before `[openReceiver]` returns. */
  endsWhileOpening?: 'complete' | 'error';
  cancelThrows?: boolean;
}

/** A session written against `ReceiverSession` alone, over a list, whose hooks throw as told. */
class FaultyReceiver extends Receiver<Msg> {
  readonly settled: string[] = [];
  requests = 0;
  cancels = 0;
  constructor(
    private readonly messages: Msg[],
    private readonly faults: Faults,
    private readonly fault = new Error('the session threw'),
  ) {
    super();
  }

  [openReceiver](sink: ReceiverSink<Msg>): ReceiverSession<Msg> {
    const { faults, fault, messages } = this;
    if (faults.endsWhileOpening === 'complete') sink.complete();
    if (faults.endsWhileOpening === 'error') sink.error(fault);
    let sent = 0;
    return {
      request: (n) => {
        if (++this.requests > (faults.requestThrowsAfter ?? Number.POSITIVE_INFINITY)) throw fault;
        for (let i = 0; i < n && sent < messages.length; i++) sink.next(messages[sent++] as Msg);
        if (sent === messages.length) sink.complete();
      },
      settle: (m, outcome) => {
        this.settled.push(`${m.n} ${outcome}`);
        if (outcome === faults.settleThrows) throw fault;
      },
      cancel: () => {
        this.cancels++;
        if (faults.cancelThrows) throw new Error('cancel threw');
      },
      describe: (m) => {
        if (faults.describeThrows) throw fault;
        return `list position ${m.n}`;
      },
      unparked: () => {
        if (faults.unparkedThrows) throw fault;
      },
    };
  }
}

const messages = (n: number, keys: number): Msg[] =>
  Array.from({ length: n }, (_, i) => ({ key: `k${i % keys}`, n: i }));

describe.each(laneKinds)('a receiver session of its own that throws, on %s', (_name, kind: LaneKind) => {
  let lanes: ReturnType<LaneKind['executor']>;
  beforeEach(() => {
    lanes = kind.executor(2);
  });
  afterEach(async () => {
    await lanes.close().catch(() => undefined);
  });

  const run = (
    receiver: FaultyReceiver,
    handler: string,
    options: { maxInFlight?: number; maxPerKey?: number } = {},
  ) =>
    outcomeOf(
      within(
        lastValueFrom(
          receiver.pipe(
            keyedDispatch<Msg, string, Ran>({
              executor: lanes.executor,
              key: (m) => m.key,
              handle: kind.handler(handler),
              ...options,
            }),
            toArray(),
          ),
        ),
        5000,
        'the output to end',
      ),
    );

  it.each(['echo', 'later'])(
    'errors the output with what `settle` threw for a message done (handler %s), and cancels the session once',
    async (handler) => {
      const receiver = new FaultyReceiver(messages(6, 2), { settleThrows: 'done' });
      const outcome = await run(receiver, handler);
      expect(outcome).toEqual({ error: new Error('the session threw') });
      expect(receiver.cancels).toBe(1);
    },
  );

  it('errors the output with what `settle` threw for a failed message, and cancels the session once', async () => {
    const receiver = new FaultyReceiver(messages(3, 3), { settleThrows: 'failed' });
    const outcome = await run(receiver, 'boom');
    expect(outcome).toEqual({ error: new Error('the session threw') });
    expect(receiver.settled).toContain('1 failed');
    expect(receiver.cancels).toBe(1);
  });

  it('errors the output with what `request` threw when asked to refill the window, and cancels the session once', async () => {
    const receiver = new FaultyReceiver(messages(40, 4), { requestThrowsAfter: 1 });
    const outcome = await run(receiver, 'later', { maxInFlight: 16 });
    expect(outcome).toEqual({ error: new Error('the session threw') });
    expect(receiver.requests).toBe(2);
    expect(receiver.cancels).toBe(1);
  });

  it('errors the output with what `unparked` threw when a parked message enters the window', async () => {
    const receiver = new FaultyReceiver(messages(8, 1), { unparkedThrows: true });
    const outcome = await run(receiver, 'later', { maxInFlight: 8, maxPerKey: 2 });
    expect(outcome).toEqual({ error: new Error('the session threw') });
    expect(receiver.cancels).toBe(1);
  });

  it("errors the output with the handler's failure, as thrown, when `describe` throws for it", async () => {
    const receiver = new FaultyReceiver(messages(3, 3), { describeThrows: true });
    const outcome = await run(receiver, 'boom');
    expect(outcome).toEqual({ error: new Error('boom k1') });
    expect(receiver.cancels).toBe(1);
  });

  it.each([
    ['while it was being opened', { endsWhileOpening: 'complete' as const }],
    ['at its first request', {}],
  ])('errors the output with what `cancel` threw for a session that completed %s', async (_when, faults) => {
    const receiver = new FaultyReceiver([], { ...faults, cancelThrows: true });
    const outcome = await run(receiver, 'echo');
    expect(outcome).toEqual({ error: new Error('cancel threw') });
    expect(receiver.cancels).toBe(1);
  });

  it.each(['complete', 'error'] as const)(
    'cancels a session once that ended (%s) while it was being opened, as one that ends later',
    async (end) => {
      const receiver = new FaultyReceiver([], { endsWhileOpening: end });
      const outcome = await run(receiver, 'echo');
      expect(outcome).toEqual(end === 'complete' ? { value: [] } : { error: new Error('the session threw') });
      expect(receiver.cancels).toBe(1);
    },
  );
});
