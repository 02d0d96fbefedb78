import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { keyedDispatch, retryPolicy, ThreadExecutor, threadHandler } from 'keyed-dispatch';
import { type KafkaMessage, kafkaKey, keyedProducer } from 'keyed-dispatch/kafka';
import { kafkaTracing, traced, traceHeaders } from 'keyed-dispatch/otel';
import { lastValueFrom } from 'rxjs';
import { ADAPTERS } from '../kafka/adapters';
import { createTopic, unique, within } from '../kafka/broker';
import { useEventTopics } from '../kafka/events';
import { useProducers } from '../kafka/producers';
import { buildFixture } from '../support/brokers';
import { useTracing } from './tracing-support';

jest.setTimeout(60_000);

const exporter = useTracing();
const eventTopics = useEventTopics('tracing');
const [client] = useProducers(eventTopics);

/** One topic of one partition, written once inside a producer span per message; `a` fails its first attempt. */
let written: Promise<{ topic: string; sent: Map<string, string> }> | undefined;
const writeOnce = () => {
  written ??= (async () => {
    const topic = unique('traced');
    await createTopic(eventTopics.client, topic, 1);
    const send = keyedProducer<string>(client!.producer(), {
      topic,
      key: (id) => id,
      headers: () => traceHeaders(),
    });
    const sent = new Map<string, string>();
    const tracer = trace.getTracer('producer');
    for (const id of ['a', 'b']) {
      await tracer.startActiveSpan(`send ${id}`, async (span) => {
        await send.send(id);
        sent.set(id, span.spanContext().spanId);
        span.end();
      });
    }
    return { topic, sent };
  })();
  return written;
};

/** The spans the thread handler's module exported, one JSON line each (the module names it so too). */
const SPANS_FILE = join(tmpdir(), `traced-thread-spans-${process.pid}.jsonl`);
let threadModule: string;
beforeAll(async () => {
  threadModule = await buildFixture('traced-thread-handler');
}, 60_000);
afterAll(() => rmSync(SPANS_FILE, { force: true }));

interface ThreadSpan {
  name: string;
  traceId: string;
  spanId: string;
  parent: string | undefined;
  attributes: Record<string, unknown>;
}

const spansOf = (traceId: string) =>
  exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe.each(ADAPTERS)('traced keyedDispatch on $name with a real broker', (kind) => {
  it('runs each message in a consumer span under the producer span of its traceparent header, with the handler’s own spans nested in it and a retry as a second attempt', async () => {
    const { topic, sent } = await writeOnce();
    const group = unique('group');
    const receiver = kind.receiver(group, [topic]);
    const failedOnce = new Set<string>();
    const done: string[] = [];
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch(
          traced<KafkaMessage, string, void>(
            {
              key: kafkaKey,
              handle: async (m) => {
                await new Promise((resolve) => setTimeout(resolve, 1));
                // After an await: the context must have followed the handler.
                trace.getTracer('handler').startSpan('db query').end();
                const id = kafkaKey(m);
                if (id === 'a' && !failedOnce.has(id)) {
                  failedOnce.add(id);
                  throw new Error('first attempt fails');
                }
                done.push(id);
              },
              failurePolicy: retryPolicy({ maxAttempts: 2, backoff: { initialMs: 1 } }),
            },
            { system: 'kafka', describe: kafkaTracing, consumerGroup: group },
          ),
        ),
      ),
      { defaultValue: undefined },
    );
    await within(20_000, () => done.length === 2);
    await receiver.close();
    await output;

    for (const [id, producerSpan] of sent) {
      const producer = exporter.getFinishedSpans().find((s) => s.spanContext().spanId === producerSpan)!;
      const all = spansOf(producer.spanContext().traceId);
      const processes = all.filter((s) => s.name === `process ${topic}` && parentOf(s) === producerSpan);
      const mine = processes.filter((s) => s.attributes['messaging.consumer.group.name'] === group);
      expect(mine.map((s) => s.attributes['keyed_dispatch.attempt'])).toEqual(id === 'a' ? [1, 2] : [1]);
      const last = mine[mine.length - 1]!;
      expect(last.kind).toBe(1 + 3); // SpanKind.CONSUMER
      expect(last.attributes).toMatchObject({
        'messaging.system': 'kafka',
        'messaging.operation.type': 'process',
        'messaging.destination.name': topic,
        'messaging.message.key': id,
        'messaging.kafka.offset': id === 'a' ? 0 : 1,
        'messaging.destination.partition.id': '0',
      });
      expect(last.attributes['keyed_dispatch.mailbox_wait_ms']).toBeGreaterThanOrEqual(0);
      expect(last.links.map((l) => l.context.spanId)).toEqual([producerSpan]);
      if (id === 'a') {
        expect(mine[0]!.status.code).toBe(2); // SpanStatusCode.ERROR
        expect(mine[0]!.events.map((e) => e.name)).toEqual(['exception']);
      }
      for (const attempt of mine) {
        const children = all.filter((s) => parentOf(s) === attempt.spanContext().spanId);
        expect(children.map((s) => s.name)).toEqual(['db query']);
      }
    }
  });

  it('runs each message on a thread lane in a consumer span there, under the producer span of its traceparent header, with the handler’s own spans nested in it', async () => {
    const { topic, sent } = await writeOnce();
    writeFileSync(SPANS_FILE, '');
    const executor = new ThreadExecutor({ workers: 1 });
    const receiver = kind.receiver(unique('group'), [topic]);
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch({
          key: kafkaKey,
          handle: threadHandler<KafkaMessage, string>(threadModule, 'handle'),
          executor,
        }),
      ),
      { defaultValue: undefined },
    );
    try {
      await within(20_000, () => readFileSync(SPANS_FILE, 'utf8').split('\n').length > 4);
    } finally {
      await receiver.close();
      await output;
      await executor.close();
    }
    const spans = readFileSync(SPANS_FILE, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as ThreadSpan);
    for (const [id, producerSpan] of sent) {
      const process = spans.find((s) => s.parent === producerSpan);
      expect(process).toMatchObject({
        name: `process ${topic}`,
        attributes: {
          'messaging.system': 'kafka',
          'messaging.destination.name': topic,
          'messaging.destination.partition.id': '0',
          'messaging.kafka.offset': id === 'a' ? 0 : 1,
          'messaging.message.key': id,
          'keyed_dispatch.attempt': 1,
        },
      });
      const producer = exporter.getFinishedSpans().find((s) => s.spanContext().spanId === producerSpan)!;
      expect(process!.traceId).toBe(producer.spanContext().traceId);
      expect(spans.filter((s) => s.parent === process!.spanId).map((s) => s.name)).toEqual(['db query']);
    }
  });
});
