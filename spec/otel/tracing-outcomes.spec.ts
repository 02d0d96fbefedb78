import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { keyedDispatch, retryPolicy } from 'keyed-dispatch';
import { type TracedMessage, traced } from 'keyed-dispatch/otel';
import { from, lastValueFrom, toArray } from 'rxjs';
import { useTracing } from './tracing-support';

interface Order {
  account: string;
  n: number;
}

const orders = (count: number): Order[] =>
  Array.from({ length: count }, (_, n) => ({ account: `a${n % 7}`, n }));
const place = (order: Order): TracedMessage => ({
  destination: 'orders',
  attributes: { 'messaging.message.id': String(order.n) },
});

describe('traced with no OpenTelemetry SDK registered', () => {
  it('runs the handler as it is, without describing a single message', async () => {
    let described = 0;
    const handled = await lastValueFrom(
      from(orders(300)).pipe(
        keyedDispatch(
          traced<Order, string, number>(
            { key: (o) => o.account, handle: async (o) => o.n },
            {
              system: 'test',
              describe: (o) => {
                described++;
                return place(o);
              },
            },
          ),
        ),
        toArray(),
      ),
    );
    expect(handled).toHaveLength(300);
    expect(described).toBe(0);
  });
});

describe('traced with an SDK', () => {
  const exporter = useTracing();
  const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

  it('ends a message its failure policy gives up on without a dead letter in a `fail` span under its last attempt, with status ERROR', async () => {
    const handled = await lastValueFrom(
      from(orders(2)).pipe(
        keyedDispatch(
          traced<Order, string, number>(
            {
              key: (o) => o.account,
              handle: async (o) => {
                if (o.n === 0) throw new Error('out of stock');
                return o.n;
              },
              failurePolicy: retryPolicy({ maxAttempts: 2, backoff: { initialMs: 1 } }),
            },
            { system: 'test', describe: place },
          ),
        ),
        toArray(),
      ),
    );
    expect(handled).toEqual([1]);
    const spans = exporter.getFinishedSpans();
    const attempts = spans.filter(
      (s) => s.name === 'process orders' && s.attributes['messaging.message.id'] === '0',
    );
    expect(attempts.map((s) => s.attributes['keyed_dispatch.attempt'])).toEqual([1, 2]);
    const fail = spans.filter((s) => s.name === 'fail orders');
    expect(fail).toHaveLength(1);
    expect(parentOf(fail[0]!)).toBe(attempts[1]!.spanContext().spanId);
    expect(fail[0]!.status).toEqual({ code: 2, message: 'out of stock' }); // SpanStatusCode.ERROR
    expect(fail[0]!.attributes).toEqual({
      'messaging.system': 'test',
      'messaging.operation.type': 'settle',
      'messaging.operation.name': 'fail',
      'messaging.destination.name': 'orders',
      'messaging.message.id': '0',
      'messaging.message.key': 'a0',
      'keyed_dispatch.outcome': 'failed',
      'keyed_dispatch.attempts': 2,
    });
  });

  it('still dead-letters a message it cannot describe (its key selector failed too), with no span for it', async () => {
    const dead: unknown[] = [];
    const handled = await lastValueFrom(
      from([{ account: 'a1', n: 1 }, null as unknown as Order]).pipe(
        keyedDispatch(
          traced<Order, string, number>(
            {
              key: (o) => o.account,
              handle: async (o) => o.n,
              failurePolicy: retryPolicy({
                deadLetter: (m) => {
                  dead.push(m);
                },
              }),
            },
            { system: 'test', describe: place },
          ),
        ),
        toArray(),
      ),
    );
    expect(handled).toEqual([1]);
    expect(dead).toEqual([null]);
  });
});
