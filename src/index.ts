export { WindowOverflowError } from './dispatcher';
export type { HandlerContext } from './engine/mailbox';
export { Lane } from './engine/lane';
export { KeyedExecutor, KeyedExecutorClosedError, type KeyedExecutorOptions } from './executor';
export { keyedDispatch } from './keyed-dispatch';
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
export {
  type BackoffOptions,
  type FailureContext,
  type FailurePolicy,
  type RetryPolicyOptions,
  retryPolicy,
} from './failure-policy';
export {
  type AnyRuntimeComponent,
  type ComponentStopReport,
  DispatchRuntime,
  type DispatchRuntimeOptions,
  DispatchRuntimeStoppedError,
  dispatchComponent,
  type GracefulStopOptions,
  type RuntimeComponent,
  type StopReport,
} from './runtime';
