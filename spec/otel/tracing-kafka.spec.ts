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

/**
 * One topic of one partition, written once inside a producer span per message (by id: the key, then
 * `#n` for key `p`'s three): `a` fails its first attempt, `dead` every attempt; `p` takes 30 ms, so
 * with `maxPerKey: 1` its second and third messages park.
 */
const IDS = ['a', 'b', 'dead', 'p#1', 'p#2', 'p#3'];
const keyOf = (id: string) => id.split('#')[0]!;
let written: Promise<{ topic: string; sent: Map<string, string> }> | undefined;
const writeOnce = () => {
  written ??= (async () => {
    const topic = unique('traced');
    await createTopic(eventTopics.client, topic, 1);
    const send = keyedProducer<string>(client!.producer(), {
      topic,
      key: keyOf,
      headers: () => traceHeaders(),
    });
    const sent = new Map<string, string>();
    const tracer = trace.getTracer('producer');
    for (const id of IDS) {
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
const producerSpanOf = (spanId: string) =>
  exporter.getFinishedSpans().find((s) => s.spanContext().spanId === spanId)!;
/** Key `p`'s later messages parked while the first ran: their wait in the window is apart from it. */
const expectParked = (attributes: Record<string, unknown>[]) => {
  const [first, ...parked] = attributes;
  expect(first!['keyed_dispatch.parked_ms']).toBeUndefined();
  for (const a of parked) {
    expect(a['keyed_dispatch.parked_ms']).toBeGreaterThan(a['keyed_dispatch.mailbox_wait_ms'] as number);
  }
};
/** The span of the dead letter, `dead_letter <topic>`, and its attributes. */
const expectDeadLetter = (topic: string, span: ReadableSpan | undefined) =>
  expect(span?.attributes).toMatchObject({
    'messaging.operation.type': 'settle',
    'messaging.operation.name': 'dead_letter',
    'messaging.destination.name': topic,
    'messaging.message.key': 'dead',
    'messaging.kafka.offset': IDS.indexOf('dead'),
    'keyed_dispatch.outcome': 'dead_lettered',
    'keyed_dispatch.attempts': 2,
  });

describe.each(ADAPTERS)('traced keyedDispatch on $name with a real broker', (kind) => {
  it('runs each message in a consumer span under the producer span of its traceparent header, with the handler’s own spans nested in it, a retry as a second attempt, the time parked apart from the mailbox wait, and the dead letter in a span under the last attempt', async () => {
    const { topic, sent } = await writeOnce();
    const group = unique('group');
    const receiver = kind.receiver(group, [topic]);
    const failedOnce = new Set<string>();
    const done: string[] = [];
    const deadLettered: string[] = [];
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch(
          traced<KafkaMessage, string, void>(
            {
              key: kafkaKey,
              handle: async (m) => {
                const id = kafkaKey(m);
                await new Promise((resolve) => setTimeout(resolve, id === 'p' ? 30 : 1));
                // After an await: the context must have followed the handler.
                trace.getTracer('handler').startSpan('db query').end();
                if (id === 'dead' || (id === 'a' && !failedOnce.has(id))) {
                  failedOnce.add(id);
                  throw new Error('attempt fails');
                }
                done.push(id);
              },
              maxPerKey: 1,
              failurePolicy: retryPolicy({
                maxAttempts: 2,
                backoff: { initialMs: 1 },
                deadLetter: async (m) => {
                  await new Promise((resolve) => setTimeout(resolve, 1));
                  trace.getTracer('dlq').startSpan('send dead-letters').end();
                  deadLettered.push(kafkaKey(m));
                },
              }),
            },
            { system: 'kafka', describe: kafkaTracing, consumerGroup: group },
          ),
        ),
      ),
      { defaultValue: undefined },
    );
    await within(20_000, () => done.length === 5 && deadLettered.length === 1);
    await receiver.close();
    await output;

    const processOf = (id: string) =>
      spansOf(producerSpanOf(sent.get(id)!).spanContext().traceId).filter(
        (s) =>
          s.name === `process ${topic}` &&
          parentOf(s) === sent.get(id) &&
          s.attributes['messaging.consumer.group.name'] === group,
      );
    expectParked(['p#1', 'p#2', 'p#3'].map((id) => processOf(id)[0]!.attributes));
    const [, lastOfDead] = processOf('dead');
    const deadLetter = exporter
      .getFinishedSpans()
      .find((s) => parentOf(s) === lastOfDead?.spanContext().spanId && s.name === `dead_letter ${topic}`);
    expectDeadLetter(topic, deadLetter);
    const inDeadLetter = exporter
      .getFinishedSpans()
      .filter((s) => parentOf(s) === deadLetter!.spanContext().spanId);
    expect(inDeadLetter.map((s) => s.name)).toEqual(['send dead-letters']);

    for (const id of ['a', 'b']) {
      const producerSpan = sent.get(id)!;
      const producer = producerSpanOf(producerSpan);
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
      // Waiting for the first attempt only: a retry's wait is its backoff.
      expect(mine[0]!.attributes['keyed_dispatch.mailbox_wait_ms']).toBeGreaterThanOrEqual(0);
      expect(mine.slice(1).map((s) => s.attributes['keyed_dispatch.mailbox_wait_ms'])).toEqual(
        id === 'a' ? [undefined] : [],
      );
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

  it('runs each message on a thread lane in a consumer span there, under the producer span of its traceparent header, with the handler’s own spans nested in it, its mailbox wait and time parked, and the dead letter in a span here under the producer span', async () => {
    const { topic, sent } = await writeOnce();
    writeFileSync(SPANS_FILE, '');
    const executor = new ThreadExecutor({ workers: 1 });
    const receiver = kind.receiver(unique('group'), [topic]);
    const deadLettered: string[] = [];
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch(
          traced(
            {
              key: kafkaKey,
              handle: threadHandler<KafkaMessage, string>(threadModule, 'handle'),
              executor,
              maxPerKey: 1,
              failurePolicy: retryPolicy({
                maxAttempts: 2,
                backoff: { initialMs: 1 },
                deadLetter: (m) => {
                  deadLettered.push(kafkaKey(m));
                },
              }),
            },
            { system: 'kafka', describe: kafkaTracing },
          ),
        ),
      ),
      { defaultValue: undefined },
    );
    const read = () =>
      readFileSync(SPANS_FILE, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as ThreadSpan);
    try {
      // Seven attempts: `dead` has two.
      await within(
        20_000,
        () => deadLettered.length === 1 && read().filter((s) => s.name.startsWith('process')).length === 7,
      );
    } finally {
      await receiver.close();
      await output;
      await executor.close();
    }
    const spans = read();
    const processOf = (id: string) =>
      spans.find((s) => s.parent === sent.get(id) && s.name.startsWith('process'))!;
    for (const id of IDS) {
      expect(processOf(id).attributes['keyed_dispatch.mailbox_wait_ms']).toBeGreaterThanOrEqual(0);
    }
    expectParked(['p#1', 'p#2', 'p#3'].map((id) => processOf(id).attributes));
    const deadLetter = exporter
      .getFinishedSpans()
      .find((s) => parentOf(s) === sent.get('dead') && s.name === `dead_letter ${topic}`);
    expectDeadLetter(topic, deadLetter);
    for (const id of ['a', 'b']) {
      const producerSpan = sent.get(id)!;
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
      const producer = producerSpanOf(producerSpan);
      expect(process!.traceId).toBe(producer.spanContext().traceId);
      expect(spans.filter((s) => s.parent === process!.spanId).map((s) => s.name)).toEqual(['db query']);
    }
  });
});
