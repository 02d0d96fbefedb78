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
} from './dispatch-runtime';
