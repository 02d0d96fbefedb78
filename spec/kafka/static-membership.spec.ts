import { fork } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Consumer } from '@platformatic/kafka';
import { keyedDispatch } from 'keyed-dispatch';
import { fromPlatformaticKafka, type KafkaMessage, kafkaKey, keyedProducer } from 'keyed-dispatch/kafka';
import { lastValueFrom } from 'rxjs';
import { sleep } from '../support/waits';
import { ADAPTERS } from './adapters';
import { BROKER, offsets, QUICK_GROUP, unique, within } from './broker';
import { decode, dispatchRecords, type Event, useEventTopics } from './events';
import { buildMemberScript } from './member-script';

jest.setTimeout(90_000);

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
      const output = dispatchRecords(receiver, async () => {
        handled++;
      });
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

/**
 * The set-up docs/kafka.md gives per client for restarts in seconds. `sessionTimeoutMs`: what a
 * replacement that waited for the crashed member to time out would wait (the consumer protocol's is the
 * broker's, 10 s here); `bound`: the share of it the replacement may take to its first message. kafkajs
 * has no static membership: it waits out a short session timeout (which the broker's
 * `group.min.session.timeout.ms` must allow), and is held to that. With a group instance id,
 * @platformatic/kafka takes the crashed member's partitions over at once, on either protocol.
 */
const RESTART_SETUPS: Record<
  string,
  { client: string; args: string[]; sessionTimeoutMs: number; bound: number }
> = {
  kafkajs: { client: 'kafkajs', args: ['', '3000'], sessionTimeoutMs: 3000, bound: 2 },
  '@platformatic/kafka': { client: 'platformatic', args: ['instance'], sessionTimeoutMs: 10_000, bound: 0.5 },
  '@platformatic/kafka on the classic protocol': {
    client: 'platformatic-classic',
    args: ['instance'],
    sessionTimeoutMs: 30_000,
    bound: 0.25,
  },
  // No group instance id: the broker's consumer-protocol session timeout (10 s here) passes first.
  '@confluentinc/kafka-javascript': { client: 'confluent', args: [], sessionTimeoutMs: 10_000, bound: 1.5 },
};

const OUT = join(__dirname, '..', '..', '.build', 'kafka-static');
let memberScript = '';
beforeAll(() => {
  memberScript = buildMemberScript(OUT);
});

describe.each(ADAPTERS)('$name, restarted after a SIGKILL', (adapter) => {
  const setup = RESTART_SETUPS[adapter.name];

  /** A member process of `groupId`, recording what it handles in `file`. */
  function member(groupId: string, topic: string, file: string) {
    const child = fork(memberScript, [setup.client, groupId, topic, file, '5', '16', ...setup.args], {
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      execArgv: ['--no-warnings'], // kafkajs sets negative timeouts, which Node warns of
    });
    const state = {
      handled: 0,
      exited: null as number | null,
      stderr: '',
      forkedAt: Date.now(),
      startingAt: 0,
    };
    child.on('message', (m: { handled?: number; startingAt?: number }) => {
      if (m.handled !== undefined) state.handled = m.handled;
      if (m.startingAt !== undefined) state.startingAt = m.startingAt;
    });
    child.stderr?.on('data', (chunk) => {
      state.stderr += chunk;
    });
    child.on('exit', (code) => {
      state.exited = code ?? -1;
    });
    return { child, state };
  }

  /** The events a member handled, in the order it started them: key, per-key number, start time. */
  const handled = (file: string) =>
    (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []).map((line) => {
      const [key, seq, , , started] = line.split(' ');
      return { key, seq: Number(seq), started: Number(started) };
    });

  /** Whether each key's events were started in order (a restart replays from the last commit, in order). */
  const inKeyOrder = (events: ReturnType<typeof handled>) => {
    const last = new Map<string, number>();
    for (const { key, seq } of events) {
      if ((last.get(key) ?? -1) >= seq) return false;
      last.set(key, seq);
    }
    return true;
  };

  it('the replacement handles its first message well within the session timeout, losing nothing and keeping key order', async () => {
    const topic = await eventTopics.topicWith(2, 800, 20);
    const groupId = unique('group');
    const files = [join(OUT, `${groupId}-0.log`), join(OUT, `${groupId}-1.log`)];
    const first = member(groupId, topic, files[0]);
    await within(30_000, () => first.state.handled >= 100 || first.state.exited !== null);
    first.child.kill('SIGKILL');
    const killedAt = Date.now();
    const second = member(groupId, topic, files[1]);
    try {
      const all = () => new Set(files.flatMap((f) => handled(f).map((e) => `${e.key} ${e.seq}`)));
      await within(60_000, () => all().size >= 800 || second.state.exited !== null);
      expect([second.state.exited, second.state.stderr.slice(0, 500)]).toEqual([null, '']);
      expect(all().size).toBe(800);
      const replayed = handled(files[1]);
      expect([inKeyOrder(handled(files[0])), inKeyOrder(replayed)]).toEqual([true, true]);
      // From its start (its process loaded) to its first message: a replacement that waited for the
      // crashed member's session timeout would take all of it. Loading the process, slow on a loaded
      // machine, is left out of the bound, not of the figure printed.
      const delayMs = replayed[0].started - second.state.startingAt;
      const sinceKillMs = replayed[0].started - killedAt;
      const duplicates = handled(files[0]).length + replayed.length - 800;
      process.stdout.write(
        `${adapter.name}: first message ${Math.round(sinceKillMs)} ms after the kill, ${Math.round(delayMs)} ms after the start; ${duplicates} duplicates of 800\n`,
      );
      expect(delayMs).toBeLessThan(setup.sessionTimeoutMs * setup.bound);
    } finally {
      if (second.state.exited === null) {
        second.child.send('close');
        await new Promise((resolve) => second.child.once('exit', resolve));
      }
    }
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

  it("a member started under a running member's instance id takes its partitions over; the running one errors, fenced", async () => {
    const topic = await eventTopics.topicWith(2, 0, 1);
    const groupId = unique('group');
    const send = keyedProducer<Event>(eventTopics.producer, { topic, key: (e) => e.key });
    const sendBatch = (batch: number) =>
      send.send(Array.from({ length: 32 }, (_, n) => ({ key: `k${n % 8}`, seq: batch * 1000 + n })));
    const first = staticMember(groupId, topic, 'same');
    let second: ReturnType<typeof staticMember> | null = null;
    let failure: unknown = null;
    first.output.catch((error) => {
      failure = error;
    });
    try {
      await sendBatch(1);
      expect(await within(15_000, () => first.inBatch(1).size === 2)).toBe(true);
      second = staticMember(groupId, topic, 'same');
      const taker = second;
      // Without taking over, the second would wait for the first to leave and fail after its rebalance timeout.
      expect(await within(10_000, () => failure !== null)).toBe(true);
      expect(String(failure)).toMatch(/instance/i);
      await sendBatch(2);
      expect(await within(10_000, () => taker.inBatch(2).size === 2)).toBe(true);
    } finally {
      const members = [first, second].filter((m) => m !== null);
      await Promise.allSettled(members.map((m) => m.receiver.close()));
      await Promise.allSettled(members.map((m) => m.output));
    }
  });

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
