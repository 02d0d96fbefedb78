import { context, propagation } from '@opentelemetry/api';

/**
 * The active trace context as message headers (`traceparent`, and `tracestate` when set), by the global
 * propagator (W3C trace context where the SDK registered it); empty outside a span. Give it to the
 * producer, e.g. `keyedProducer(producer, { topic, key, headers: () => traceHeaders() })`, or write it as
 * fields of a Redis Streams entry, and `traced` on the consumer continues the trace.
 */
export function traceHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  propagation.inject(context.active(), headers);
  return headers;
}
