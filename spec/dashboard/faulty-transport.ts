import {
  type DispatchMetrics,
  keyedDispatch,
  openReceiver,
  PullSession,
  Receiver,
  type ReceiverSession,
  type ReceiverSink,
  type TransportOperation,
} from 'keyed-dispatch';

/** A session whose transport fails when the spec says so; it survives each failure, as a receiver retrying. */
class FailingSession extends PullSession<never> {
  constructor(sink: ReceiverSink<never>) {
    super(sink, undefined, { receiver: 'faulty()', onTransportError: undefined, maxUnreachableMs: 60_000 });
  }

  failed(operation: TransportOperation): void {
    this.transportFailed(operation, new Error(`${operation} failed`));
  }
}

/**
 * A dispatcher (counted in `metrics`) on a receiver that delivers nothing and whose transport fails when
 * `fail(operation)` is called: each failure is a transport fault the receiver survives.
 */
export function faultyTransport(metrics: DispatchMetrics) {
  let session: FailingSession | null = null;
  const receiver = new (class extends Receiver<never> {
    [openReceiver](sink: ReceiverSink<never>): ReceiverSession<never> {
      session = new FailingSession(sink);
      return session;
    }
  })();
  const subscription = receiver
    .pipe(keyedDispatch({ key: () => 'k', handle: () => [], stats: metrics }))
    .subscribe({ error: () => undefined });
  return {
    fail(operation: TransportOperation, times = 1): void {
      for (let i = 0; i < times; i++) session?.failed(operation);
    },
    stop: () => subscription.unsubscribe(),
  };
}
