import { ProxyTracer, ProxyTracerProvider, type Tracer, trace } from '@opentelemetry/api';

/**
 * Calls between two questions to the global provider while it has no SDK: asking costs about as much
 * as the rest of a message's dispatch. So the first messages after an SDK registers, at most this many
 * per traced dispatcher, go without a span.
 */
const ASK_EVERY = 256;

/**
 * Whether spans of a tracer can be recorded at all, asked per message: not while it is the API's proxy
 * with no SDK registered behind it, where every span would be a no-op, so that `traced` kept with no
 * SDK skips the message's description, context and span. The proxy delegates once an SDK registers a
 * provider, so `now` asks the global provider now and then until it has one, then answers true for
 * good. Any other tracer may record: its spans say so themselves (`isRecording`).
 */
export class RecordingCheck {
  /** An SDK was seen behind the tracer (or it is no proxy): it stays. */
  private seen: boolean;
  private untilAsked = 0;

  constructor(private readonly tracer: Tracer) {
    this.seen = !(tracer instanceof ProxyTracer);
  }

  now(): boolean {
    if (this.seen) return true;
    if (--this.untilAsked > 0) return false;
    this.untilAsked = ASK_EVERY;
    const provider = trace.getTracerProvider();
    const tracer = this.tracer as ProxyTracer;
    this.seen =
      !(provider instanceof ProxyTracerProvider) ||
      provider.getDelegateTracer(tracer.name, tracer.version, tracer.options) !== undefined;
    return this.seen;
  }
}
