import {
  openReceiver,
  Receiver,
  type ReceiverSession,
  type ReceiverSink,
  type Settlement,
} from 'keyed-dispatch';
import { type Deferred, deferred } from './waits';

/**
 * A receiver over an iterator that records the protocol as it happens: every `request(n)`, every
 * settlement, how many messages were delivered. It delivers synchronously within the demand.
 */
export class ScriptedReceiver<T> extends Receiver<T> {
  readonly requests: number[] = [];
  readonly settled: Array<{ message: T; outcome: Settlement; error?: unknown }> = [];
  delivered = 0;
  cancelled = false;
  sink: ReceiverSink<T> | null = null;

  constructor(private readonly messages: Iterator<T>) {
    super();
  }

  /** Delivered and not yet settled. */
  get unsettled(): number {
    return this.delivered - this.settled.length;
  }

  [openReceiver](sink: ReceiverSink<T>): ReceiverSession<T> {
    this.sink = sink;
    let demand = 0;
    let pulling = false;
    let done = false;
    const pull = () => {
      if (pulling) return;
      pulling = true;
      while (demand > 0 && !done && !this.cancelled) {
        const step = this.messages.next();
        if (step.done) {
          done = true;
          sink.complete();
          break;
        }
        demand--;
        this.delivered++;
        sink.next(step.value);
      }
      pulling = false;
    };
    return {
      request: (n) => {
        this.requests.push(n);
        demand += n;
        pull();
      },
      settle: (message, outcome, error) => {
        this.settled.push({ message, outcome, error });
      },
      cancel: () => {
        this.cancelled = true;
      },
    };
  }
}

/** Resolves after every pending promise callback has run (one macrotask turn). */
export function flushMicrotasks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Handlers that wait until the test releases them, oldest first. */
export class Gates {
  private readonly waiting: Deferred<void>[] = [];

  /** A new closed gate; returns the promise a handler returns. */
  open(): Promise<void> {
    const gate = deferred();
    this.waiting.push(gate);
    return gate.promise;
  }

  /** Releases the oldest waiting handler. */
  release(): void {
    this.waiting.shift()?.resolve();
  }

  get size(): number {
    return this.waiting.length;
  }
}
