export { WindowOverflowError } from './dispatcher';
export type { HandlerContext } from './engine/mailbox';
export { Lane } from './engine/lane';
export { KeyedExecutor, KeyedExecutorClosedError, type KeyedExecutorOptions } from './executor';
export { keyedDispatch } from './keyed-dispatch';
export {
  DispatchMetrics,
  type DispatchMetricsOptions,
  type LaneMetrics,
  type LatencySummary,
  type MetricsSnapshot,
} from './metrics';
export type { KeyedDispatchOptions } from './options';
export {
  isPullable,
  openReceiver,
  type Pullable,
  Receiver,
  type ReceiverSession,
  type ReceiverSink,
  type SettledListener,
  type Settlement,
} from './receiver';
export { type AsyncIterableReceiverOptions, fromAsyncIterable } from './receivers/from-async-iterable';
export { fromIterable, type IterableReceiverOptions } from './receivers/from-iterable';
export { LocalBus, LocalBusClosedError, type LocalBusReceiveOptions } from './receivers/local-bus';
export { type DispatchSnapshot, DispatchStats } from './stats';
