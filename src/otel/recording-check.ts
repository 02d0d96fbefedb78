import { ProxyTracer, ProxyTracerProvider, type Tracer, trace } from '@opentelemetry/api';

/**
 * Whether spans of `tracer` can be recorded at all, asked per message: false while it is the API's
 * proxy with no SDK registered behind it, where every span would be a no-op, so that `traced` kept with
 * no SDK skips the message's description, context and span. The proxy delegates once an SDK registers a
 * provider, so this asks the global provider (a few property reads) until it has one, then answers true
 * for good. Any other tracer may record: its spans say so themselves (`isRecording`).
 */
export function recordingCheck(tracer: Tracer): () => boolean {
  if (!(tracer instanceof ProxyTracer)) return always;
  let registered = false;
  return () => {
    if (registered) return true;
    const provider = trace.getTracerProvider();
    registered =
      !(provider instanceof ProxyTracerProvider) ||
      provider.getDelegateTracer(tracer.name, tracer.version, tracer.options) !== undefined;
    return registered;
  };
}

function always(): boolean {
  return true;
}
