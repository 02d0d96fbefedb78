import {
  type DispatchMetrics,
  keyedDispatch,
  openReceiver,
  Receiver,
  type ReceiverSession,
  type TransportLag,
} from 'keyed-dispatch';

/**
 * A dispatcher (counted in `metrics`) on a receiver of its own that delivers nothing and reports `lag`
 * as its transport's (or, given a function, throws what it throws), as a receiver outside the library
 * would; `report` changes what it reports.
 */
export function laggingTransport(metrics: DispatchMetrics, lag: readonly TransportLag[] | (() => never)) {
  let reported = lag;
  const receiver = new (class extends Receiver<never> {
    [openReceiver](): ReceiverSession<never> {
      return {
        request() {},
        settle() {},
        cancel() {},
        transportLag: () => (typeof reported === 'function' ? reported() : reported),
      };
    }
  })();
  const subscription = receiver
    .pipe(keyedDispatch({ key: () => 'k', handle: () => [], stats: metrics }))
    .subscribe();
  return {
    report(lag: readonly TransportLag[]): void {
      reported = lag;
    },
    stop: () => subscription.unsubscribe(),
  };
}

/** A Kafka partition's lag as a receiver reports it. */
export const partitionLag = (topic: string, partition: number, lag: number): TransportLag => ({
  transport: 'kafka',
  source: topic,
  partition,
  consumer: null,
  lag,
  committed: '0',
  at: 0,
});
