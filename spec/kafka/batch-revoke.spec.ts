import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KeyedExecutor, keyedBatchDispatch, ThreadExecutor, threadHandler } from 'keyed-dispatch';
import {
  type KafkaConsumerAdapter,
  type KafkaConsumerListener,
  type KafkaMessage,
  KafkaReceiver,
  kafkaKey,
} from 'keyed-dispatch/kafka';
import { lastValueFrom, tap } from 'rxjs';
import { ADAPTERS, type ClientAdapter } from './adapters';
import { createTopic, unique, within } from './broker';
import { useEventTopics } from './events';
import { ObservedAdapter } from './observed-adapter';

jest.setTimeout(60_000);

const eventTopics = useEventTopics('batch-revoke');

const PARTITIONS = 4;
/** Dispatcher keys; each has a record key on every partition (`p2.k1`: partition 2, dispatcher key k1). */
const KEYS = 4;
/** Records of each record key. */
const PER_KEY = 25;
const RECORDS = PARTITIONS * KEYS * PER_KEY;
/**
 * Slack when comparing a batch's start (the wall clock of its thread) with the revoke's: the clock's
 * millisecond steps, and a batch claimed in the moment between the revoke's start and its withdrawal.
 * A batch left queued behind a running one starts a batch's duration (25 ms) or more later.
 */
const CLOCK_SLACK_MS = 10;

/** The dispatcher key: the record key less its partition, so one key's batch mixes partitions. */
const acrossPartitions = (m: KafkaMessage) => kafkaKey(m).split('.')[1];

interface HandledRecord {
  partition: number;
  offset: number;
  key: string;
  seq: number;
}
/** One batch call, as the handlers in batch-revoke-handlers.js describe it. */
interface Batch {
  started: number;
  records: HandledRecord[];
}

const HANDLERS = join(__dirname, 'batch-revoke-handlers.js');
const { HOLD } = require(HANDLERS);
const LANE_KINDS = [
  {
    name: 'event-loop lanes',
    executor: () => new KeyedExecutor({ lanes: 1 }),
    handle: require(HANDLERS).waits as (batch: KafkaMessage[]) => Promise<Batch>,
  },
  {
    name: 'thread lanes',
    executor: () => new ThreadExecutor({ workers: 1 }),
    handle: threadHandler<KafkaMessage[], Batch>(HANDLERS, 'blocks'),
  },
];

let topic: string;
beforeAll(async () => {
  topic = unique('batch-revoke');
  await createTopic(eventTopics.client, topic, PARTITIONS);
  const messages = [];
  for (let partition = 0; partition < PARTITIONS; partition++) {
    for (let seq = 0; seq < PER_KEY; seq++) {
      for (let k = 0; k < KEYS; k++) {
        const key = `p${partition}.k${k}`;
        messages.push({ key, value: JSON.stringify({ key, seq }), partition });
      }
    }
  }
  await eventTopics.producer.send({ topic, messages });
});
afterEach(() => rmSync(HOLD, { force: true }));

/**
 * The adapter of one member, observed: it notes when the member's first revoke began (the receiver
 * withdraws what has not started within it), and every commit of an offset below which a record has
 * not finished on either member.
 */
class CheckedAdapter extends ObservedAdapter {
  revokedAt = Number.NaN;

  constructor(
    inner: KafkaConsumerAdapter,
    private readonly finished: Set<string>,
    private readonly pastUnfinished: string[],
  ) {
    super(inner);
  }

  override start(listener: KafkaConsumerListener): Promise<void> {
    return super.start({
      batch: (t, partition, records) => listener.batch(t, partition, records),
      revoking: (partitions) => {
        if (Number.isNaN(this.revokedAt)) this.revokedAt = Date.now();
        const done = listener.revoking(partitions);
        // What had not started is withdrawn by now: the held batch may go on.
        rmSync(HOLD, { force: true });
        return done;
      },
      assigned: (partitions, mode) => listener.assigned(partitions, mode),
      failed: (error) => listener.failed(error),
      transportFailed: (operation, error) => listener.transportFailed(operation, error),
      transportRecovered: () => listener.transportRecovered(),
      prefetch: listener.prefetch,
    });
  }

  override commit(offsets: Parameters<KafkaConsumerAdapter['commit']>[0]): Promise<void> {
    for (const { partition, offset } of offsets) {
      for (let o = 0; o < Number(offset); o++) {
        if (!this.finished.has(`${partition}:${o}`)) this.pastUnfinished.push(`${partition}@${offset}: ${o}`);
      }
    }
    return super.commit(offsets);
  }
}

// The classic protocol revokes every partition at once, so no batch ever mixes revoked partitions with
// kept ones: the mixed case arises where revokes are incremental.
describe.each(ADAPTERS.filter((kind) => kind.holdsRevokes))(
  'keyedBatchDispatch on $name with a real broker, keyed across partitions',
  (kind: ClientAdapter) => {
    it.each(LANE_KINDS)(
      'on $name, a revoke withdraws the revoked partitions’ batches that have not started, and they go to the new owner; nothing is lost, commits stay contiguous, and each record key keeps its order',
      async (lanes) => {
        const groupId = unique('group');
        const handled: Array<Batch & { member: string }> = [];
        const finished = new Set<string>();
        const pastUnfinished: string[] = [];
        const member = (name: string) => {
          const executor = lanes.executor();
          const adapter = new CheckedAdapter(kind.adapter(groupId, [topic]), finished, pastUnfinished);
          const receiver = new KafkaReceiver(adapter, { revokeTimeoutMs: 20_000 });
          const output = lastValueFrom(
            receiver.pipe(
              keyedBatchDispatch<KafkaMessage, string, Batch>({
                key: acrossPartitions,
                handle: lanes.handle,
                executor,
                // A window that frees a batch at a time takes each partition in turn: batches mix them.
                maxInFlight: 16,
                maxBatch: 4,
              }),
              tap((batch) => {
                handled.push({ member: name, ...batch });
                for (const r of batch.records) finished.add(`${r.partition}:${r.offset}`);
              }),
            ),
            { defaultValue: undefined },
          );
          return { adapter, receiver, output, executor };
        };

        const a = member('a');
        await within(20_000, () => handled.length > 0);
        // On a thread, A's next run of batches waits behind its first until A's revoke has begun.
        writeFileSync(HOLD, '');
        const b = member('b');
        await a.adapter.next((e) => e.kind === 'revoking');
        const revoking = a.adapter.events.find((e) => e.kind === 'revoking');
        const revoked = (revoking?.kind === 'revoking' ? (revoking.partitions ?? []) : []).map(
          (p) => p.partition,
        );
        const all = await within(30_000, () => finished.size === RECORDS);
        await Promise.all([a.receiver.close(), b.receiver.close()]);
        await Promise.all([a.output, b.output]);
        await Promise.all([a.executor.close(), b.executor.close()]);

        expect(all).toBe(true);
        expect(revoked.length).toBeGreaterThan(0);
        expect(revoked.length).toBeLessThan(PARTITIONS);
        const ofRevoked = (member: string, started: (at: number) => boolean) =>
          handled
            .filter((h) => h.member === member && started(h.started))
            .flatMap((h) => h.records.filter((r) => revoked.includes(r.partition)));
        // Nothing of the revoked partitions started on A after the revoke…
        const revokedAt = a.adapter.revokedAt;
        expect(ofRevoked('a', (at) => at > revokedAt + CLOCK_SLACK_MS)).toEqual([]);
        // …while some of each was still to come, and B handled it.
        const onB = ofRevoked('b', () => true);
        for (const p of revoked) expect(onB.some((r) => r.partition === p)).toBe(true);
        expect(pastUnfinished).toEqual([]);
        // Each record key's records, in the order they started on either member: once each, in order.
        const byKey = new Map<string, number[]>();
        for (const h of [...handled].sort((x, y) => x.started - y.started)) {
          for (const r of h.records) byKey.set(r.key, [...(byKey.get(r.key) ?? []), r.seq]);
        }
        expect(byKey.size).toBe(PARTITIONS * KEYS);
        const inOrder = Array.from({ length: PER_KEY }, (_, i) => i);
        for (const [key, seqs] of byKey) expect({ key, seqs }).toEqual({ key, seqs: inOrder });
      },
    );
  },
);
