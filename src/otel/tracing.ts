import {
  type Attributes,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { from, Observable, type ObservableInput } from 'rxjs';
import type { HandlerContext } from '../engine/mailbox';
import type { KeyedDispatchOptions } from '../options';
import { describe, optionsObject } from '../validate';
import type { OpenTelemetryAttributes, OpenTelemetryTracer } from './meter';

/** A message's place in its transport, as the messaging conventions name it. */
export interface TracedMessage {
  /** `messaging.destination.name`: the topic, stream or subject. */
  destination: string;
  /** Span attributes of the message: partition, offset or id, delivery count. */
  attributes: OpenTelemetryAttributes;
  /** The trace context the producer sent (`traceparent`, `tracestate`), when the transport has headers. */
  headers?: (name: string) => string | undefined;
}

/** Options of `traced`. */
export interface TracingOptions<T> {
  /** `messaging.system`: `'kafka'`, `'nats'`, `'redis'`… Required. */
  system: string;
  /** Where a message came from; `kafkaTracing`, `jetStreamTracing`, `redisTracing` are ready ones. Required. */
  describe: (message: T) => TracedMessage;
  /** `messaging.consumer.group.name`. Default none. */
  consumerGroup?: string;
  /** The tracer. Default `trace.getTracer('keyed-dispatch')` (the global provider's). */
  tracer?: OpenTelemetryTracer;
}

const headerGetter: TextMapGetter<(name: string) => string | undefined> = {
  get: (read, name) => read(name),
  keys: () => ['traceparent', 'tracestate'],
};

/**
 * `keyedDispatch` options whose handler runs in a `process` span (kind CONSUMER) per message attempt
 * (see `tracedHandler`), with `keyed_dispatch.mailbox_wait_ms`: from the key selector, when the message
 * was taken in, to the handler's start (time parked and waiting in its key's mailbox). Without `traced`
 * nothing of this runs: tracing off costs nothing. For a function handler (event-loop lanes); on thread
 * lanes wrap the handler in its module with `tracedHandler` instead (a thread handler here throws a
 * `TypeError`).
 */
export function traced<T, K, R>(
  options: KeyedDispatchOptions<T, K, R>,
  tracing: TracingOptions<T>,
): KeyedDispatchOptions<T, K, R> {
  const { handle, key } = options;
  // A thread handler is a descriptor object, not a function: this refuses it too.
  if (typeof handle !== 'function') {
    throw new TypeError(
      `traced: expected \`handle\` to be a function handler (wrap a thread handler in its module with tracedHandler), got ${describe(handle)}`,
    );
  }
  const takenIn = new WeakMap<object, number>();
  return {
    ...options,
    key: (message) => {
      if (typeof message === 'object' && message !== null) takenIn.set(message, performance.now());
      return key(message);
    },
    handle: spanPerAttempt('traced', handle, tracing, (message) => {
      const since = takenIn.get(message as object);
      return since === undefined ? {} : { 'keyed_dispatch.mailbox_wait_ms': performance.now() - since };
    }),
  };
}

/**
 * A handler that runs in a `process` span (kind CONSUMER) per message attempt, after OpenTelemetry's
 * messaging conventions: `messaging.system`, `.operation.type`, `.destination.name`,
 * `.consumer.group.name`, the message's place (partition, offset or id) and key, `keyed_dispatch.attempt`
 * (1 for the first) and `keyed_dispatch.lane`. The span's parent is the trace context in the message's
 * headers, so the consumer's work joins the producer's trace; the handler runs in the span's context,
 * so what it instruments nests under it. A failed attempt ends its span with status ERROR and the
 * exception; a retry is a new span with the next attempt. Use it in a thread handler's module (with an
 * SDK set up in that module: each worker thread has its own); on event-loop lanes `traced` wraps it.
 */
export function tracedHandler<T, K, R>(
  handle: (message: T, context: HandlerContext<K>) => ObservableInput<R>,
  tracing: TracingOptions<T>,
): (message: T, context: HandlerContext<K>) => ObservableInput<R> {
  return spanPerAttempt('tracedHandler', handle, tracing, () => ({}));
}

/** `handle` in a span per attempt, with `more` attributes of the message; `owner` names the caller in errors. */
function spanPerAttempt<T, K, R>(
  owner: string,
  handle: (message: T, context: HandlerContext<K>) => ObservableInput<R>,
  tracing: TracingOptions<T>,
  more: (message: T) => Attributes,
): (message: T, context: HandlerContext<K>) => ObservableInput<R> {
  optionsObject(owner, tracing, ['system', 'describe', 'consumerGroup', 'tracer'] satisfies Array<
    keyof TracingOptions<T>
  >);
  if (typeof handle !== 'function') {
    throw new TypeError(`${owner}: expected \`handle\` to be a function, got ${describe(handle)}`);
  }
  if (typeof tracing.describe !== 'function') {
    throw new TypeError(
      `${owner}: expected \`describe\` to be a function, got ${describe(tracing.describe)}`,
    );
  }
  const tracer = (tracing.tracer as Tracer | undefined) ?? trace.getTracer('keyed-dispatch');
  const base: Attributes = {
    'messaging.system': tracing.system,
    'messaging.operation.type': 'process',
    ...(tracing.consumerGroup !== undefined && { 'messaging.consumer.group.name': tracing.consumerGroup }),
  };
  // Attempts so far per message: the policy retries with the same message object.
  const attempts = new WeakMap<object, number>();
  return (message, handlerContext) => {
    const place = tracing.describe(message);
    const parent =
      place.headers === undefined
        ? context.active()
        : propagation.extract(ROOT_CONTEXT, place.headers, headerGetter);
    // Also a link, as the conventions recommend, for backends that show the producer's trace apart.
    const creation = place.headers === undefined ? undefined : trace.getSpanContext(parent);
    const boxed = message as object;
    const attempt = (attempts.get(boxed) ?? 0) + 1;
    attempts.set(boxed, attempt);
    const span = tracer.startSpan(
      `process ${place.destination}`,
      { kind: SpanKind.CONSUMER, links: creation === undefined ? [] : [{ context: creation }] },
      parent,
    );
    const inSpan = trace.setSpan(parent, span);
    // Not recorded (no SDK, or sampled out): the handler as it is, only in the context.
    if (!span.isRecording()) return context.with(inSpan, () => handle(message, handlerContext));
    span.setAttributes({
      ...base,
      ...place.attributes,
      ...more(message),
      'messaging.destination.name': place.destination,
      'messaging.message.key': String(handlerContext.key),
      'keyed_dispatch.attempt': attempt,
      'keyed_dispatch.lane': handlerContext.laneIndex,
    });
    return new Observable<R>((subscriber) => {
      const failed = (error: unknown) => {
        endFailed(span, error);
        subscriber.error(error);
      };
      let result: ObservableInput<R>;
      try {
        result = context.with(inSpan, () => handle(message, handlerContext));
      } catch (error) {
        failed(error);
        return;
      }
      const inner = from(result).subscribe({
        next: (value) => context.with(inSpan, () => subscriber.next(value)),
        error: failed,
        complete: () => {
          span.end();
          subscriber.complete();
        },
      });
      // Torn down before it finished (the dispatcher stopped): the span still ends.
      return () => {
        inner.unsubscribe();
        if (span.isRecording()) span.end();
      };
    });
  };
}

function endFailed(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
  span.end();
}
