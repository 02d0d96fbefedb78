import {
  fromIterable,
  keyedDispatch,
  NOTHING,
  openReceiver,
  PullSession,
  Receiver,
  type ReceiverSink,
  type SettledListener,
  type Settlement,
} from 'keyed-dispatch';
import { lastValueFrom } from 'rxjs';
import { flushMicrotasks } from '../support/scripted-receiver';
import { deferred } from '../support/waits';
import { type Hooks, ListSession, RecordingSink } from './list-session';

function open(hooks: Hooks = {}, onSettled?: SettledListener<string>) {
  const sink = new RecordingSink<string>();
  const session = new ListSession(sink, hooks, onSettled);
  return { sink, session };
}

describe('PullSession', () => {
  describe('demand', () => {
    it('delivers nothing before the first request, then exactly what was requested', () => {
      const { sink, session } = open();
      session.push('a', 'b', 'c');
      expect(sink.delivered).toEqual([]);
      session.request(2);
      expect(sink.delivered).toEqual(['a', 'b']);
      session.request(5);
      expect(sink.delivered).toEqual(['a', 'b', 'c']);
      expect(session.demandLeft()).toBe(4);
    });

    it('never exceeds the demand, counting a request made from inside a delivery without nesting deliveries', () => {
      const { sink, session } = open();
      session.push('a', 'b', 'c', 'd');
      sink.onNext = (m) => {
        if (m === 'a') session.request(2);
      };
      session.request(1);
      expect(sink.delivered).toEqual(['a', 'b', 'c']);
      expect(sink.maxDepth).toBe(1);
    });

    it('delivers without limit after request(Infinity)', () => {
      const { sink, session } = open();
      session.request(Number.POSITIVE_INFINITY);
      session.push(...Array.from({ length: 1000 }, (_, i) => `m${i}`));
      expect(sink.delivered).toHaveLength(1000);
      expect(session.demandLeft()).toBe(Number.POSITIVE_INFINITY);
    });

    it('refuses deliver() without demand and from inside another delivery, so the caller keeps the message', () => {
      const { sink, session } = open();
      expect(session.offer('early')).toBe(false);
      session.request(2);
      let nested: boolean | undefined;
      sink.onNext = () => {
        nested ??= session.offer('nested');
      };
      expect(session.offer('a')).toBe(true);
      expect(nested).toBe(false);
      expect(sink.delivered).toEqual(['a']);
    });
  });

  describe('wake-up', () => {
    it('resolves whenDemand() once demand comes, and at once while there is some', async () => {
      const { session } = open();
      let woke = false;
      const waiting = session.demanded().then((open) => {
        woke = open;
      });
      await flushMicrotasks();
      expect(woke).toBe(false);
      session.request(1);
      await waiting;
      expect(woke).toBe(true);
      await expect(session.demanded()).resolves.toBe(true);
    });

    it('resolves whenDemand() with false when the session is cancelled, ending the pull loop', async () => {
      const { session } = open();
      const waiting = session.demanded();
      void session.cancel();
      await expect(waiting).resolves.toBe(false);
    });

    it('ends a timed wait at its timeout', async () => {
      const { session } = open();
      const started = Date.now();
      await session.waitAtMost(20);
      expect(Date.now() - started).toBeGreaterThanOrEqual(15);
    });
  });

  describe('terminal signals', () => {
    it('sends a single terminal signal and ignores every signal after it', () => {
      const { sink, session } = open();
      session.request(5);
      session.push('a');
      session.finish();
      session.breakWith(new Error('late'));
      session.finish();
      session.push('b');
      session.request(1);
      expect(session.offer('c')).toBe(false);
      expect(sink.events).toEqual(['next a', 'complete']);
      expect(session.ended).toBe(true);
    });

    it('fails once: an error after a failure is ignored', () => {
      const { sink, session } = open();
      session.breakWith(new Error('first'));
      session.breakWith(new Error('second'));
      session.finish();
      expect(sink.events).toEqual(['error first']);
    });

    it('fails the session when take() throws', () => {
      const sink = new RecordingSink<string>();
      const session = new (class extends ListSession {
        protected override take(): never {
          throw new Error('source broke');
        }
      })(sink);
      session.request(1);
      expect(sink.events).toEqual(['error source broke']);
    });

    it('fails the session when its pull loop throws, but not once intake has stopped', async () => {
      const first = open();
      first.session.loop(async () => {
        throw new Error('fetch failed');
      });
      await flushMicrotasks();
      expect(first.sink.events).toEqual(['error fetch failed']);

      const second = open();
      const gate = deferred();
      second.session.loop(async () => {
        await gate.promise;
        throw new Error('connection closed under it');
      });
      void second.session.cancel();
      gate.resolve();
      await flushMicrotasks();
      expect(second.sink.events).toEqual([]);
    });
  });

  describe('settlement', () => {
    it('acknowledges with the transport, then tells onSettled', () => {
      const told: string[] = [];
      const { session } = open({}, (m, outcome) => told.push(`onSettled ${m} ${outcome}`));
      session.request(2);
      session.push('a', 'b');
      session.settle('a', 'done');
      session.settle('b', 'failed', new Error('boom'));
      expect(session.calls).toEqual(['acknowledge a done', 'acknowledge b failed']);
      expect(told).toEqual(['onSettled a done', 'onSettled b failed']);
    });

    it('acknowledges through an acknowledge set on the instance (as a plain-JS class field sets it), with nobody listening', () => {
      class FieldAcknowledged extends PullSession<string> {
        readonly items: string[] = [];
        readonly acked: string[] = [];
        constructor() {
          super(new RecordingSink<string>());
          this.acknowledge = (message: string, outcome: Settlement) => {
            this.acked.push(`${message} ${outcome}`);
          };
        }
        push(...items: string[]): void {
          this.items.push(...items);
          this.drain();
        }
        protected override take(): string | typeof NOTHING {
          return this.items.shift() ?? NOTHING;
        }
      }
      const session = new FieldAcknowledged();
      session.request(2);
      session.push('a', 'b');
      session.settle('a', 'done');
      session.settle('b', 'failed', new Error('boom'));
      expect(session.acked).toEqual(['a done', 'b failed']);
    });

    it('tells onSettled only once an asynchronous acknowledgement has resolved', async () => {
      const acked = deferred();
      const told: string[] = [];
      const { session } = open({ acknowledge: () => acked.promise }, (m) => told.push(m));
      session.request(1);
      session.push('a');
      session.settle('a', 'done');
      await flushMicrotasks();
      expect(told).toEqual([]);
      acked.resolve();
      await flushMicrotasks();
      expect(told).toEqual(['a']);
    });

    it('fails the session with the error of a throwing onSettled, which never reaches the caller of settle', () => {
      const { sink, session } = open({}, () => {
        throw new Error('listener broke');
      });
      session.request(2);
      session.push('a', 'b');
      expect(() => session.settle('a', 'done')).not.toThrow();
      expect(() => session.settle('b', 'done')).not.toThrow();
      expect(sink.events).toEqual(['next a', 'next b', 'settle failed listener broke']);
      expect(session.calls).toEqual(['acknowledge a done', 'stopFetching', 'close', 'acknowledge b done']);
    });

    it('fails the session when an acknowledgement rejects, without telling onSettled', async () => {
      const told: string[] = [];
      const { sink, session } = open({ acknowledge: () => Promise.reject(new Error('XACK refused')) }, (m) =>
        told.push(m),
      );
      session.request(1);
      session.push('a');
      session.settle('a', 'done');
      await flushMicrotasks();
      expect(sink.events).toEqual(['next a', 'settle failed XACK refused']);
      expect(told).toEqual([]);
    });

    it('errors the output when a settlement fails after the source completed, as the consumer is still settling', () => {
      const { sink, session } = open({}, () => {
        throw new Error('listener broke');
      });
      session.request(1);
      session.push('a');
      session.finish();
      session.settle('a', 'done');
      expect(sink.events).toEqual(['next a', 'complete', 'settle failed listener broke']);
    });

    it('drops a settlement failure once the consumer has cancelled: there is nobody left to tell', () => {
      const { sink, session } = open({
        acknowledge: () => {
          throw new Error('ack failed');
        },
      });
      session.request(1);
      session.push('a');
      void session.cancel();
      expect(() => session.settle('a', 'done')).not.toThrow();
      expect(sink.events).toEqual(['next a']);
    });

    it('accepts settlements after the session was cancelled: delivered messages still get acknowledged', () => {
      const told: string[] = [];
      const { session } = open({}, (m) => told.push(m));
      session.request(1);
      session.push('a');
      void session.cancel();
      session.settle('a', 'done');
      expect(told).toEqual(['a']);
    });
  });

  describe('cancel', () => {
    it('stops delivery, stops fetching and closes once, returning the same promise every time', async () => {
      const { sink, session } = open();
      session.request(5);
      session.push('a');
      const first = session.cancel();
      const second = session.cancel();
      session.push('b');
      expect(second).toBe(first);
      await expect(first).resolves.toBeUndefined();
      expect(session.calls).toEqual(['stopFetching', 'close']);
      expect(sink.events).toEqual(['next a']);
    });

    it('resolves only once an asynchronous close has finished', async () => {
      const closed = deferred();
      const { session } = open({ close: () => closed.promise });
      let done = false;
      const cancelled = session.cancel().then(() => {
        done = true;
      });
      await flushMicrotasks();
      expect(done).toBe(false);
      closed.resolve();
      await cancelled;
      expect(done).toBe(true);
    });

    it('rejects with the error of a rejected or throwing close for whoever awaits it', async () => {
      const rejected = open({ close: () => Promise.reject(new Error('disconnect failed')) }).session;
      await expect(rejected.cancel()).rejects.toThrow('disconnect failed');
      const throwing = open({
        close: () => {
          throw new Error('close threw');
        },
      }).session;
      await expect(throwing.cancel()).rejects.toThrow('close threw');
    });

    it('still closes the transport when stopping the fetch throws, and rejects with that error', async () => {
      const { session } = open({
        stopFetching: () => {
          throw new Error('pause failed');
        },
      });
      await expect(session.cancel()).rejects.toThrow('pause failed');
      expect(session.calls).toEqual(['stopFetching', 'close']);
    });

    it('never leaves an unhandled rejection when the result of a failed close is ignored', async () => {
      // Jest fails a test in which a promise rejection goes unhandled.
      const { session } = open({ close: () => Promise.reject(new Error('disconnect failed')) });
      void session.cancel();
      const failing = open({ close: () => Promise.reject(new Error('disconnect failed')) });
      failing.session.breakWith(new Error('source broke'));
      await flushMicrotasks();
      await flushMicrotasks();
      expect(failing.sink.events).toEqual(['error source broke']);
    });

    it('closes the transport when the source completes or fails, and a later cancel returns that close', async () => {
      const { session } = open();
      session.finish();
      expect(session.calls).toEqual(['stopFetching', 'close']);
      await expect(session.cancel()).resolves.toBeUndefined();
      expect(session.calls).toEqual(['stopFetching', 'close']);
    });
  });

  describe('graceful close', () => {
    it('stops intake, gives back queued messages, waits for delivered ones to settle, then completes and closes', async () => {
      const { sink, session } = open();
      session.request(3);
      session.push('a', 'b', 'c');
      sink.queued.push('c');
      let closed = false;
      const closing = session.closeGracefully(10_000).then(() => {
        closed = true;
      });
      session.push('d');
      expect(sink.delivered).toEqual(['a', 'b', 'c']);
      expect(sink.queued).toEqual([]);
      expect(session.calls).toEqual(['stopFetching']);
      session.settle('a', 'done');
      await flushMicrotasks();
      expect(closed).toBe(false);
      expect(sink.events).not.toContain('complete');
      session.settle('b', 'done');
      await closing;
      expect(sink.events.at(-1)).toBe('complete');
      expect(session.calls).toEqual(['stopFetching', 'acknowledge a done', 'acknowledge b done', 'close']);
    });

    it('completes at its timeout when a delivered message never settles', async () => {
      const { sink, session } = open();
      session.request(1);
      session.push('a');
      await session.closeGracefully(20);
      expect(sink.events).toEqual(['next a', 'complete']);
    });

    it('ends its wait when the session is cancelled meanwhile, without completing', async () => {
      const { sink, session } = open();
      session.request(1);
      session.push('a');
      const closing = session.closeGracefully(60_000);
      void session.cancel();
      await closing;
      expect(sink.events).toEqual(['next a']);
      expect(session.closeGracefully(60_000)).toBe(session.cancel());
    });
  });

  it('keyedDispatch may ignore the promise of a cancel whose close rejects: it is never an unhandled rejection', async () => {
    class FailingClose extends Receiver<string> {
      [openReceiver](sink: ReceiverSink<string>) {
        return new ListSession(sink, { close: () => Promise.reject(new Error('disconnect failed')) });
      }
    }
    const subscription = new FailingClose()
      .pipe(keyedDispatch({ key: (m: string) => m, handle: async (m: string) => m }))
      .subscribe();
    subscription.unsubscribe();
    await flushMicrotasks();
    await flushMicrotasks();
  });

  it('a throwing onSettled errors the output of keyedDispatch with its error', async () => {
    const output = fromIterable(['a1', 'b1', 'a2'], {
      onSettled: (m) => {
        if (m === 'b1') throw new Error('onSettled broke');
      },
    }).pipe(keyedDispatch({ key: (m: string) => m[0], handle: async (m: string) => m }));
    await expect(lastValueFrom(output)).rejects.toThrow('onSettled broke');
  });
});
