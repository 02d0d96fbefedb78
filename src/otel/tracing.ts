import {
  type Attributes,
  type Context,
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
import { type MessageObserver, observeMessages } from '../internal/message-observer';
import { messageWaits } from '../internal/message-wait';
import type { KeyedDispatchOptions } from '../options';
import { describe, optionsObject } from '../validate';
import type { OpenTelemetryAttributes, OpenTelemetryTracer } from './meter';
import { RecordingCheck } from './recording-check';

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
 * (see `tracedHandler`). The first attempt's span has `keyed_dispatch.mailbox_wait_ms`, from when the
 * message was taken in (or left the parking area) to the handler's start, and `keyed_dispatch.parked_ms`
 * when its key held its share of the window. A message the failure policy gives up on gets a short span
 * `dead_letter <destination>` (the dead letter runs in it, so what it sends continues the trace) or
 * `fail <destination>`. Without `traced` nothing of this runs: tracing off costs nothing; with no SDK
 * registered, next to nothing. On thread lanes wrap the options too, and the handler in its module with
 * `tracedHandler`: the waits travel to the thread, the dead letter's span is made here.
 */
export function traced<T, K, R>(
  options: KeyedDispatchOptions<T, K, R>,
  tracing: TracingOptions<T>,
): KeyedDispatchOptions<T, K, R> {
  const { handle, key } = options;
  const spans = new MessageSpans('traced', tracing);
  const wrapped: KeyedDispatchOptions<T, K, R> = {
    ...options,
    // Anything else is left for keyedDispatch to refuse, naming it.
    key:
      typeof key === 'function'
        ? (message) => {
            spans.takenIn(message);
            return key(message);
          }
        : key,
    // A thread handler runs in its threads: `tracedHandler` wraps it there.
    handle: typeof handle === 'function' ? spans.handler(handle) : handle,
  };
  observeMessages(wrapped, spans.observer());
  return wrapped;
}

/**
 * A handler that runs in a `process` span (kind CONSUMER) per message attempt, after OpenTelemetry's
 * messaging conventions: `messaging.system`, `.operation.type`, `.destination.name`,
 * `.consumer.group.name`, the message's place (partition, offset or id) and key, `keyed_dispatch.attempt`
 * (1 for the first) and `keyed_dispatch.lane`. The span's parent is the trace context in the message's
 * headers, so the consumer's work joins the producer's trace; the handler runs in the span's context,
 * so what it instruments nests under it. A failed attempt ends its span with status ERROR and the
 * exception; a retry is a new span with the next attempt. Use it in a thread handler's module (with an
 * SDK set up in that module: each worker thread has its own), with the dispatcher's options wrapped in
 * `traced`, which sends each message's wait along; on event-loop lanes `traced` wraps it.
 */
export function tracedHandler<T, K, R>(
  handle: (message: T, context: HandlerContext<K>) => ObservableInput<R>,
  tracing: TracingOptions<T>,
): (message: T, context: HandlerContext<K>) => ObservableInput<R> {
  return new MessageSpans('tracedHandler', tracing).handler(handle);
}

/** What tracing keeps of a message while it is unfinished, on the thread that traces it. */
interface MessageTrace {
  /** Attempts started so far: the policy retries with the same message object. */
  attempts: number;
  /** The latest attempt's span, the parent of a dead letter's. */
  span: Span | undefined;
  /** When it started waiting for its handler (`performance.now()`): taken in, or out of parking. */
  waitingSince: number | undefined;
  /** When it parked, while it is parked. */
  parkedAt: number | undefined;
  /** How long it was parked, once it left the parking area. */
  parkedMs: number | undefined;
}

/** The spans of one `traced` or `tracedHandler`; `owner` names it in errors. */
class MessageSpans<T> {
  private readonly tracer: Tracer;
  private readonly recording: RecordingCheck;
  private readonly base: Attributes;
  /** By message object (a primitive message is traced without waits or attempt count). */
  private readonly traces = new WeakMap<object, MessageTrace>();

  constructor(
    private readonly owner: string,
    private readonly tracing: TracingOptions<T>,
  ) {
    optionsObject(owner, tracing, ['system', 'describe', 'consumerGroup', 'tracer'] satisfies Array<
      keyof TracingOptions<T>
    >);
    if (typeof tracing.describe !== 'function') {
      throw new TypeError(
        `${owner}: expected \`describe\` to be a function, got ${describe(tracing.describe)}`,
      );
    }
    this.tracer = (tracing.tracer as Tracer | undefined) ?? trace.getTracer('keyed-dispatch');
    this.recording = new RecordingCheck(this.tracer);
    this.base = {
      'messaging.system': tracing.system,
      ...(tracing.consumerGroup !== undefined && { 'messaging.consumer.group.name': tracing.consumerGroup }),
    };
  }

  /** The key selector took `message` in: its wait starts. */
  takenIn(message: T): void {
    if (!this.recording.now() || typeof message !== 'object' || message === null) return;
    this.traces.set(message, {
      attempts: 0,
      span: undefined,
      waitingSince: performance.now(),
      parkedAt: undefined,
      parkedMs: undefined,
    });
  }

  /** `handle` in a span per attempt. */
  handler<K, R>(
    handle: (message: T, context: HandlerContext<K>) => ObservableInput<R>,
  ): (message: T, context: HandlerContext<K>) => ObservableInput<R> {
    if (typeof handle !== 'function') {
      throw new TypeError(`${this.owner}: expected \`handle\` to be a function, got ${describe(handle)}`);
    }
    return (message, handlerContext) => {
      if (!this.recording.now()) return handle(message, handlerContext);
      const place = this.tracing.describe(message);
      const parent = parentOf(place);
      // Also a link, as the conventions recommend, for backends that show the producer's trace apart.
      const creation = place.headers === undefined ? undefined : trace.getSpanContext(parent);
      const span = this.tracer.startSpan(
        `process ${place.destination}`,
        { kind: SpanKind.CONSUMER, links: creation === undefined ? [] : [{ context: creation }] },
        parent,
      );
      const active = trace.setSpan(parent, span);
      // Not recorded (sampled out): the handler as it is, only in the context.
      if (!span.isRecording()) return context.with(active, () => handle(message, handlerContext));
      const record = this.traceOf(message);
      if (record !== undefined) leftParking(record);
      const attempt = record === undefined ? 1 : ++record.attempts;
      if (record !== undefined) record.span = span;
      span.setAttributes({
        ...this.attributes(place, handlerContext.key, 'process'),
        ...(attempt === 1 && waitAttributes(message, record)),
        'keyed_dispatch.attempt': attempt,
        'keyed_dispatch.lane': handlerContext.laneIndex,
      });
      return inSpan(span, active, () => handle(message, handlerContext));
    };
  }

  /** What the dispatcher tells `traced` about its messages beyond their handler's runs. */
  observer(): MessageObserver<T> {
    return {
      parked: (message) => {
        const record = this.traceOf(message);
        if (record !== undefined) record.parkedAt = performance.now();
      },
      unparked: (message) => {
        const record = this.traceOf(message);
        if (record !== undefined) leftParking(record);
      },
      waited: (message) => {
        const record = this.traceOf(message);
        if (record === undefined) return undefined;
        // Posted as it enters the window, before the dispatcher says it left the parking area.
        leftParking(record);
        if (record.waitingSince === undefined) return undefined;
        return { since: performance.timeOrigin + record.waitingSince, parkedMs: record.parkedMs ?? -1 };
      },
      failed: (message, key, error, attempts) => {
        const span = this.settleSpan(message, key, attempts, 'fail');
        if (span !== undefined) endFailed(span, error);
      },
      deadLetter: (message, key, _error, attempts, call) => {
        const span = this.settleSpan(message, key, attempts, 'dead_letter');
        if (span === undefined) return call();
        const active = trace.setSpan(context.active(), span);
        const output = context.with(active, call);
        // Nothing to wait for (or the dead letter threw, which errors the output): it is over.
        if (output === null || (typeof output !== 'object' && typeof output !== 'function')) {
          span.end();
          return output;
        }
        return inSpan(span, active, () => output as ObservableInput<unknown>);
      },
    };
  }

  /**
   * The span of the policy giving up on `message` (`messaging.operation.type` settle), under its last
   * attempt's span where this thread traced the attempts, else under the producer's context. None
   * without an SDK, nor for a message `describe` throws for (one whose key selector failed may be
   * malformed): tracing never stands in the way of its dead letter.
   */
  private settleSpan(
    message: T,
    key: unknown,
    attempts: number,
    operation: 'dead_letter' | 'fail',
  ): Span | undefined {
    if (!this.recording.now()) return undefined;
    let place: TracedMessage;
    try {
      place = this.tracing.describe(message);
    } catch {
      return undefined;
    }
    const last = this.traceOf(message)?.span;
    const parent = last === undefined ? parentOf(place) : trace.setSpan(ROOT_CONTEXT, last);
    const span = this.tracer.startSpan(
      `${operation} ${place.destination}`,
      { kind: SpanKind.INTERNAL },
      parent,
    );
    span.setAttributes({
      ...this.attributes(place, key, 'settle'),
      'messaging.operation.name': operation,
      'keyed_dispatch.outcome': operation === 'fail' ? 'failed' : 'dead_lettered',
      'keyed_dispatch.attempts': attempts,
    });
    return span;
  }

  private attributes(place: TracedMessage, key: unknown, operation: 'process' | 'settle'): Attributes {
    return {
      ...this.base,
      'messaging.operation.type': operation,
      ...place.attributes,
      'messaging.destination.name': place.destination,
      ...(key !== undefined && { 'messaging.message.key': String(key) }),
    };
  }

  private traceOf(message: T): MessageTrace | undefined {
    return typeof message === 'object' && message !== null ? this.traces.get(message) : undefined;
  }
}

/** The message left the parking area (if it was there): its wait for its handler starts now. */
function leftParking(record: MessageTrace): void {
  if (record.parkedAt === undefined) return;
  const now = performance.now();
  record.parkedMs = (record.parkedMs ?? 0) + (now - record.parkedAt);
  record.parkedAt = undefined;
  record.waitingSince = now;
}

/** The context a message's spans start under: the producer's, from its headers, else the ambient one. */
function parentOf(place: TracedMessage): Context {
  return place.headers === undefined
    ? context.active()
    : propagation.extract(ROOT_CONTEXT, place.headers, headerGetter);
}

/**
 * How long the message waited before its first attempt: taken in on this thread (`traced`), or posted
 * to a thread with the wait the main thread measured (`MessageWait`), whose clocks share a time origin.
 */
function waitAttributes(message: unknown, record: MessageTrace | undefined): Attributes {
  const now = performance.now();
  if (record?.waitingSince !== undefined) {
    return {
      'keyed_dispatch.mailbox_wait_ms': now - record.waitingSince,
      ...(record.parkedMs !== undefined && { 'keyed_dispatch.parked_ms': record.parkedMs }),
    };
  }
  const wait = messageWaits.of(message);
  if (wait === undefined) return {};
  return {
    'keyed_dispatch.mailbox_wait_ms': performance.timeOrigin + now - wait.since,
    ...(wait.parkedMs >= 0 && { 'keyed_dispatch.parked_ms': wait.parkedMs }),
  };
}

/**
 * Subscribes to what `run` returns inside `span`'s context, its values emitted there too; the span ends
 * with it (status ERROR and the exception on an error), or when it is torn down (the dispatcher stopped).
 */
function inSpan<R>(span: Span, active: Context, run: () => ObservableInput<R>): Observable<R> {
  return new Observable<R>((subscriber) => {
    const failed = (error: unknown) => {
      endFailed(span, error);
      subscriber.error(error);
    };
    let result: ObservableInput<R>;
    try {
      result = context.with(active, run);
    } catch (error) {
      failed(error);
      return;
    }
    const inner = from(result).subscribe({
      next: (value) => context.with(active, () => subscriber.next(value)),
      error: failed,
      complete: () => {
        span.end();
        subscriber.complete();
      },
    });
    return () => {
      inner.unsubscribe();
      if (span.isRecording()) span.end();
    };
  });
}

function endFailed(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
  span.end();
}
