import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, headers } from '@nats-io/transport-node';
import { trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import Redis from 'ioredis';
import { keyedDispatch } from 'keyed-dispatch';
import { fromJetStream, type JetStreamMessage } from 'keyed-dispatch/nats';
import { jetStreamTracing, redisTracing, traced, traceHeaders } from 'keyed-dispatch/otel';
import { fromRedisStreams, type RedisStreamMessage } from 'keyed-dispatch/redis';
import { lastValueFrom, take } from 'rxjs';
import { startBroker } from '../support/brokers';
import { useTracing } from './tracing-support';

jest.setTimeout(30_000);

const exporter = useTracing();
const RUN = `kd_spec_tracing_${process.pid}_${Date.now()}`;

/** Runs `send` inside a producer span; returns that span's id. */
const inProducerSpan = (send: () => Promise<unknown>): Promise<string> =>
  trace.getTracer('producer').startActiveSpan('send', async (span) => {
    await send();
    span.end();
    return span.spanContext().spanId;
  });

const processSpans = () => exporter.getFinishedSpans().filter((s) => s.name.startsWith('process '));
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
/** The handler's own span: it must nest under the process span. */
const query = () => trace.getTracer('handler').startSpan('db query').end();

describe('traced keyedDispatch on NATS JetStream', () => {
  it('runs each message in a consumer span under the producer span of its traceparent header, with the handler’s spans nested in it', async () => {
    startBroker('nats');
    const nc = await connect({ servers: '127.0.0.1:4222' });
    const jsm = await jetstreamManager(nc);
    const stream = RUN;
    try {
      await jsm.streams.add({ name: stream, subjects: [`${RUN}.>`] });
      await jsm.consumers.add(stream, { durable_name: 'workers', ack_policy: AckPolicy.Explicit });
      const producer = await inProducerSpan(() => {
        const h = headers();
        for (const [name, value] of Object.entries(traceHeaders())) h.set(name, value);
        return jetstream(nc).publish(`${RUN}.k1`, 'one', { headers: h });
      });
      const consumer = await jetstream(nc).consumers.get(stream, 'workers');
      await lastValueFrom(
        fromJetStream({ consumer, maxWaitMs: 1000 }).pipe(
          keyedDispatch(
            traced<JetStreamMessage, string, void>(
              {
                key: (m) => m.subject,
                handle: async () => {
                  await new Promise((resolve) => setTimeout(resolve, 1));
                  query();
                },
              },
              { system: 'nats', describe: jetStreamTracing, consumerGroup: 'workers' },
            ),
          ),
          take(1),
        ),
        { defaultValue: undefined },
      );
      const [span] = processSpans().filter((s) => s.attributes['messaging.destination.name'] === `${RUN}.k1`);
      expect(parentOf(span!)).toBe(producer);
      expect(span!.attributes).toMatchObject({
        'messaging.system': 'nats',
        'messaging.message.id': '1',
        'messaging.nats.delivery_count': 1,
        'messaging.consumer.group.name': 'workers',
        'keyed_dispatch.attempt': 1,
      });
      const children = exporter.getFinishedSpans().filter((s) => parentOf(s) === span!.spanContext().spanId);
      expect(children.map((s) => s.name)).toEqual(['db query']);
    } finally {
      await jsm.streams.delete(stream);
      await nc.close();
    }
  });
});

describe('traced keyedDispatch on Redis Streams', () => {
  it('continues the trace of an entry’s traceparent field, and starts a new trace for an entry without one', async () => {
    startBroker('redis');
    const redis = new Redis({ host: '127.0.0.1', port: 6379 });
    const stream = `${RUN}-redis`;
    try {
      const producer = await inProducerSpan(() =>
        redis.xadd(stream, '*', 'key', 'traced', ...Object.entries(traceHeaders()).flat()),
      );
      const plain = await redis.xadd(stream, '*', 'key', 'plain');
      await lastValueFrom(
        fromRedisStreams({ redis, streams: [stream], group: 'workers', consumerName: 'c' }).pipe(
          keyedDispatch(
            traced<RedisStreamMessage, string, void>(
              { key: (m) => m.key, handle: async () => query() },
              { system: 'redis', describe: redisTracing, consumerGroup: 'workers' },
            ),
          ),
          take(2),
        ),
        { defaultValue: undefined },
      );
      const spans = processSpans().filter((s) => s.attributes['messaging.destination.name'] === stream);
      const byKey = new Map(spans.map((s) => [s.attributes['messaging.message.key'], s]));
      expect(parentOf(byKey.get('traced')!)).toBe(producer);
      expect(parentOf(byKey.get('plain')!)).toBeUndefined();
      expect(byKey.get('plain')!.attributes['messaging.message.id']).toBe(plain);
    } finally {
      await redis.del(stream);
      await redis.quit();
    }
  });
});
