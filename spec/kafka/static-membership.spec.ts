import { fork } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Consumer } from '@platformatic/kafka';
import { keyedDispatch } from 'keyed-dispatch';
import { fromPlatformaticKafka, type KafkaMessage, kafkaKey, keyedProducer } from 'keyed-dispatch/kafka';
import { lastValueFrom } from 'rxjs';
import { BROKER, offsets, QUICK_GROUP, unique, within } from './broker';
import { decode, type Event, useEventTopics } from './events';
import { buildMemberScript } from './member-script';

jest.setTimeout(90_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const eventTopics = useEventTopics('static');

/** A @platformatic/kafka consumer of `groupId` with a group instance id (static membership). */
function staticConsumer(groupId: string, instanceId: string, protocol: 'consumer' | 'classic'): Consumer {
  const timing =
    protocol === 'consumer'
      ? { groupProtocol: 'consumer' as const, rebalanceTimeout: 60_000 }
      : {
          sessionTimeout: QUICK_GROUP.sessionTimeout,
          heartbeatInterval: QUICK_GROUP.heartbeatInterval,
          rebalanceTimeout: QUICK_GROUP.rebalanceTimeout,
        };
  return new Consumer({
    clientId: 'static-spec',
    bootstrapBrokers: [BROKER],
    groupId,
    groupInstanceId: instanceId,
    ...timing,
  });
}

describe.each(['consumer', 'classic'] as const)(
  '@platformatic/kafka with a group instance id, %s protocol',
  (protocol) => {
    it('commits what it handled: the broker accepts its commits', async () => {
      const topic = await eventTopics.topicWith(2, 100, 10);
      const groupId = unique('group');
      const receiver = fromPlatformaticKafka({
        consumer: staticConsumer(groupId, unique('instance'), protocol),
        topics: [topic],
        fromBeginning: true,
        maxWaitMs: 100,
        commitIntervalMs: 100,
      });
      let handled = 0;
      const output = lastValueFrom(
        receiver.pipe(
          keyedDispatch<KafkaMessage, string, void>({
            key: kafkaKey,
            handle: async () => {
              handled++;
            },
          }),
        ),
        { defaultValue: undefined },
      );
      try {
        const { end } = await offsets(eventTopics.client, groupId, topic);
        // Committed while it runs (every 100 ms), not only by close().
        let committed = new Map<number, string>();
        for (const until = Date.now() + 20_000; Date.now() < until; ) {
          committed = (await offsets(eventTopics.client, groupId, topic)).committed;
          if (handled === 100 && [...end].every(([p, o]) => committed.get(p) === o)) break;
          await sleep(100);
        }
        expect(committed).toEqual(end);
      } finally {
        await receiver.close();
        await output;
      }
    });
  },
);

describe('@platformatic/kafka with a group instance id, after a crash', () => {
  const OUT = join(__dirname, '..', '..', '.build', 'kafka-static');
  let memberScript = '';
  beforeAll(() => {
    memberScript = buildMemberScript(OUT);
  });

  type Client = 'platformatic' | 'platformatic-classic';

  /** A member process of `groupId` with the group instance id `instanceId`, recording what it handles. */
  function member(client: Client, groupId: string, topic: string, instanceId: string, file: string) {
    const child = fork(memberScript, [client, groupId, topic, file, '5', '16', instanceId], {
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    const state = { handled: 0, exited: null as number | null, stderr: '' };
    child.on('message', (m: { handled?: number }) => {
      if (m.handled !== undefined) state.handled = m.handled;
    });
    child.stderr?.on('data', (chunk) => {
      state.stderr += chunk;
    });
    child.on('exit', (code) => {
      state.exited = code ?? -1;
    });
    return { child, state };
  }

  const handledIn = (files: string[]) =>
    new Set(
      files
        .flatMap((f) => (existsSync(f) ? readFileSync(f, 'utf8').split('\n').filter(Boolean) : []))
        .map((l) => l.split(' ').slice(0, 2).join(' ')),
    );

  /**
   * Runs a member until it has handled 200 of 2000 events, kills it, starts another under the same
   * instance id, runs `check` on that one, and expects every event handled without it failing.
   */
  async function crashAndRestart(
    client: Client,
    check: (second: ReturnType<typeof member>) => Promise<void>,
  ) {
    const topic = await eventTopics.topicWith(2, 2000, 20);
    const groupId = unique('group');
    const instanceId = unique('instance');
    const files = [join(OUT, `${groupId}-0.log`), join(OUT, `${groupId}-1.log`)];
    const first = member(client, groupId, topic, instanceId, files[0]);
    await within(30_000, () => first.state.handled >= 200 || first.state.exited !== null);
    first.child.kill('SIGKILL');
    const second = member(client, groupId, topic, instanceId, files[1]);
    try {
      await check(second);
      await within(60_000, () => handledIn(files).size >= 2000 || second.state.exited !== null);
      expect([second.state.exited, second.state.stderr.slice(0, 500)]).toEqual([null, '']);
      expect(handledIn(files).size).toBe(2000);
    } finally {
      if (second.state.exited === null) {
        second.child.send('close');
        await new Promise((resolve) => second.child.once('exit', resolve));
      }
    }
  }

  it('consumer protocol: a member restarted under the same instance id waits until the broker lets the crashed one go, then carries on', async () => {
    // The broker holds the instance id for the crashed member until its session times out.
    await crashAndRestart('platformatic', async () => {});
  });

  it('classic protocol: a member restarted under the same instance id takes the partitions back at once, long before the session timeout', async () => {
    // The member's session timeout is 30 s: a restart that waited for it would handle nothing for that long.
    await crashAndRestart('platformatic-classic', async (second) => {
      expect(await within(10_000, () => second.state.handled > 0 || second.state.exited !== null)).toBe(true);
      expect(second.state.handled).toBeGreaterThan(0);
    });
  });
});

describe('@platformatic/kafka with a group instance id, consumer protocol, a graceful restart', () => {
  /** A static member of `groupId` that records the partition of every event it handles, by batch. */
  function staticMember(groupId: string, topic: string, instanceId: string) {
    const receiver = fromPlatformaticKafka({
      consumer: staticConsumer(groupId, instanceId, 'consumer'),
      topics: [topic],
      fromBeginning: true,
      maxWaitMs: 100,
    });
    const partitions = new Map<number, Set<number>>();
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch<KafkaMessage, string, void>({
          key: kafkaKey,
          handle: async (m) => {
            const batch = Math.floor(decode(m).seq / 1000);
            if (!partitions.has(batch)) partitions.set(batch, new Set());
            partitions.get(batch)?.add(m.partition);
          },
        }),
      ),
      { defaultValue: undefined },
    );
    const inBatch = (batch: number) => partitions.get(batch) ?? new Set<number>();
    return { receiver, output, inBatch };
  }

  it("keeps a closed member's partitions for it while it restarts: no other member takes them", async () => {
    const topic = await eventTopics.topicWith(4, 0, 1);
    const groupId = unique('group');
    const send = keyedProducer<Event>(eventTopics.producer, { topic, key: (e) => e.key });
    // Events over 16 keys, numbered from `batch` × 1000, so a handler can tell the batches apart.
    const sendBatch = (batch: number) =>
      send.send(Array.from({ length: 64 }, (_, n) => ({ key: `k${n % 16}`, seq: batch * 1000 + n })));
    type Member = ReturnType<typeof staticMember>;
    const handledBy = (batch: number, ...members: Member[]) =>
      new Set(members.flatMap((m) => [...m.inBatch(batch)]));
    /** Both members handled `batch` on every partition, each on its own ones. */
    const split = (batch: number, x: Member, y: Member) =>
      handledBy(batch, x, y).size === 4 && x.inBatch(batch).size + y.inBatch(batch).size === 4;
    const a = staticMember(groupId, topic, 'a');
    const b = staticMember(groupId, topic, 'b');
    let restarted: Member | null = null;
    try {
      // Batches over every partition until two in a row split the same way between the two members:
      // the assignment has settled, and it says whose partitions are whose.
      let batch = 0;
      let settled = false;
      while (!settled && batch < 6) {
        await sendBatch(++batch);
        expect(await within(15_000, () => handledBy(batch, a, b).size === 4)).toBe(true);
        settled =
          batch > 1 &&
          split(batch, a, b) &&
          split(batch - 1, a, b) &&
          a.inBatch(batch).size > 0 &&
          b.inBatch(batch).size > 0 &&
          [...a.inBatch(batch)].every((p) => a.inBatch(batch - 1).has(p));
      }
      expect(settled).toBe(true);
      const ofA = a.inBatch(batch);
      await a.receiver.close();
      await a.output;
      // Gone for a moment (a rolling restart): the broker keeps its partitions for it. Without that, the
      // other member takes them at its next heartbeat (every second here).
      await sendBatch(++batch);
      await sleep(3_000);
      expect([...b.inBatch(batch)].filter((p) => ofA.has(p))).toEqual([]);
      restarted = staticMember(groupId, topic, 'a');
      const back = restarted;
      expect(await within(15_000, () => handledBy(batch, back, b).size === 4)).toBe(true);
      expect(back.inBatch(batch)).toEqual(ofA);
      expect([...b.inBatch(batch)].filter((p) => ofA.has(p))).toEqual([]);
    } finally {
      const members = [a, b, restarted].filter((m) => m !== null);
      await Promise.allSettled(members.map((m) => m.receiver.close()));
      await Promise.allSettled(members.map((m) => m.output));
    }
  });
});
