export type { AsyncClosable } from './async-dispose';
export { WindowOverflowError } from './dispatch/dispatch-core';
export type { HandlerContext } from './engine/mailbox';
export { ExecutorClosedError } from './errors';
export { KeyedExecutor, type KeyedExecutorOptions } from './executor';
export {
  type BackoffOptions,
  type FailureContext,
  type FailurePolicy,
  type FailureReport,
  type RetryPolicyOptions,
  retryPolicy,
} from './failure-policy';
export {
  type DispatcherHealth,
  HealthCheck,
  type HealthOptions,
  type HealthProblem,
  type HealthReason,
  type HealthReport,
  type HealthSource,
  type HealthSources,
  type HealthStatus,
} from './health';
export { keyedBatchDispatch } from './keyed-batch-dispatch';
export { keyedDispatch } from './keyed-dispatch';
export { MessageError } from './message-error';
export {
  DispatchMetrics,
  type DispatchMetricsOptions,
  type LaneMetrics,
  type LatencySummary,
  type MetricsSnapshot,
  type OldestUnfinished,
} from './metrics';
export type { KeyedBatchDispatchOptions, KeyedDispatchOptions } from './options';
export {
  isPullable,
  openReceiver,
  type Pullable,
  Receiver,
  type ReceiverOptions,
  type ReceiverSession,
  type ReceiverSink,
  type SettledListener,
  type Settlement,
} from './receiver';
export { ClosableReceiver } from './receivers/closable-receiver';
export type { FailedAction } from './receivers/failed-action';
export { fromAsyncIterable } from './receivers/from-async-iterable';
export { fromIterable } from './receivers/from-iterable';
export { LocalBus, LocalBusClosedError, type LocalBusOptions } from './receivers/local-bus';
export { NOTHING, PullSession } from './receivers/pull-session';
export {
  type AnyRuntimeComponent,
  type ComponentStopReport,
  DispatchRuntime,
  type DispatchRuntimeOptions,
  DispatchRuntimeStoppedError,
  dispatchComponent,
  type GracefulStopOptions,
  type RuntimeComponent,
  type RuntimeState,
  type StopReport,
} from './runtime';
export {
  type DispatchSnapshot,
  DispatchStats,
  type HotKey,
  type MessageFailure,
  type TransportFaultCounts,
  type TransportFaultSeen,
} from './stats';
export {
  NoThreadLaneError,
  ThreadBlockedError,
  ThreadCrashLoopError,
  ThreadExitedError,
} from './threads/errors';
export { type ThreadHandlerOptions, threadHandler } from './threads/handler';
export { TRANSFER, type TransferItem, transfer } from './threads/protocol';
export {
  ThreadExecutor,
  type ThreadExecutorOptions,
  type ThreadResourceLimits,
} from './threads/thread-executor';
export type { ThreadHandler, ThreadHandlerFunction } from './threads/thread-handler';
export {
  type ResolvedTransportHealth,
  type TransportFault,
  type TransportHealthOptions,
  type TransportOperation,
  TransportUnreachableError,
} from './transport-fault';
export type { TransportLag } from './transport-lag';
