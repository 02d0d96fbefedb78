import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type Kafka, Partitioners } from 'kafkajs';
import { keyedProducer } from 'keyed-dispatch/kafka';
import { deferred } from '../support/waits';
import { ADAPTERS } from './adapters';
import { BROKER_START_MS, createTopic, ensureBroker, kafka, offsets, unique } from './broker';
import { buildMemberScript } from './member-script';

// 3 member processes in one group on a 12-partition topic; one is SIGKILLed mid-run.
jest.setTimeout(150_000);

const MEMBERS = 3;
const PARTITIONS = 12;
const KEYS = 1000;
const MESSAGES = 30_000;
const ROOT = join(__dirname, '..', '..');
const OUT = join(ROOT, '.build', 'kafka-scale-out');
const MEMBER_SCRIPT = join(OUT, 'member.js'); // what buildMemberScript(OUT) writes

interface Handled {
  member: number;
  key: number;
  seq: number;
  partition: number;
  offset: number;
  start: number;
  done: number;
}

let client: Kafka;

beforeAll(async () => {
  rmSync(OUT, { recursive: true, force: true });
  buildMemberScript(OUT);
  await ensureBroker();
  client = kafka('scale-out-spec');
}, BROKER_START_MS);

function read(file: string, member: number): Handled[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const out: Handled[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const [key, seq, partition, offset, start, done] = line.split(' ');
    out.push({
      member,
      key: Number(key.slice(1)),
      seq: +seq,
      partition: +partition,
      offset: +offset,
      start: +start,
      done: +done,
    });
  }
  return out;
}

describe.each(ADAPTERS.filter((kind) => kind.member !== undefined))('Kafka scale-out on $name', (kind) => {
  it('3 member processes share a 12-partition topic; after one is killed every message is handled, per-key order holds but for a replayed suffix, and commits never pass an unfinished message', async () => {
    const topic = unique('scale-out');
    const groupId = unique('scale-out-group');
    await createTopic(client, topic, PARTITIONS);
    // Per run: the member processes append, and each client runs the spec once in the same folder.
    const files = Array.from({ length: MEMBERS }, (_, i) => join(OUT, `${topic}-member-${i}.log`));
    const handledBy = new Array<number>(MEMBERS).fill(0);
    /** Partitions each member holds, once it has reported. */
    const held = new Array<number | null>(MEMBERS).fill(null);
    const exited = new Array<Promise<void>>(MEMBERS);
    const stable = deferred();
    let onProgress: () => void = () => undefined;
    const members: ChildProcess[] = files.map((file, i) => {
      // Member 0 (the one killed) is slower, so it dies with a backlog: running, finished-but-uncommitted
      // and queued messages, which the survivors must take over.
      const tuning = i === 0 ? ['5', '16'] : ['1', '256'];
      const child = fork(MEMBER_SCRIPT, [kind.member as string, groupId, topic, file, ...tuning], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      const exit = deferred();
      exited[i] = exit.promise;
      child.once('exit', () => exit.resolve());
      child.on('message', (m: { held?: number; handled?: number }) => {
        if (m.held !== undefined) {
          held[i] = m.held;
          // All three hold partitions and together the whole topic: the group is stable.
          if (
            held.every((n) => n !== null && n > 0) &&
            held.reduce<number>((n, h) => n + (h ?? 0), 0) === PARTITIONS
          )
            stable.resolve();
        }
        if (m.handled !== undefined) {
          handledBy[i] = m.handled;
          onProgress();
        }
      });
      return child;
    });
    try {
      // Produce only once the three members share the partitions: the kill is then the only rebalance.
      await stable.promise;

      // Kill member 0 mid-run, once the group has done a third of the messages (production goes on).
      const victim = 0;
      const killed = deferred<number>();
      const ticks: Array<() => void> = [];
      onProgress = () => {
        for (const tick of ticks.splice(0)) tick();
        const total = handledBy.reduce((a, b) => a + b, 0);
        if (total >= MESSAGES / 3 && handledBy[victim] > 0 && members[victim].signalCode === null) {
          members[victim].kill('SIGKILL');
          killed.resolve(performance.timeOrigin + performance.now());
        }
      };
      const nextTick = () => new Promise<void>((resolve) => ticks.push(resolve));

      // Sample the group's committed offsets on progress ticks during the whole run; each sample is
      // checked against the records afterwards. Ends once every partition's commit reaches its end.
      const samples: Array<{ at: number; committed: Map<number, string> }> = [];
      let end = new Map<number, string>();
      let produced = false;
      const sampling = (async () => {
        for (;;) {
          await nextTick();
          const o = await offsets(client, groupId, topic);
          samples.push({ at: performance.timeOrigin + performance.now(), committed: o.committed });
          end = o.end;
          if (produced && [...o.end].every(([p, high]) => o.committed.get(p) === high)) return;
        }
      })();

      const producer = client.producer({
        createPartitioner: Partitioners.DefaultPartitioner,
        idempotent: true,
        maxInFlightRequests: 1,
      });
      await producer.connect();
      const send = keyedProducer<{ key: string; seq: number }>(producer, { topic, key: (e) => e.key });
      const started = Date.now();
      const perKey = MESSAGES / KEYS;
      for (let seq = 0; seq < perKey; seq++) {
        await send.send(Array.from({ length: KEYS }, (_, k) => ({ key: `k${k}`, seq })));
      }
      await producer.disconnect();
      produced = true;
      const killedAt = await killed.promise;
      await exited[victim];
      await sampling;
      for (let i = 1; i < MEMBERS; i++) members[i].send('close');
      await Promise.all(exited);
      const elapsed = Date.now() - started;

      const records = files.flatMap((file, i) => read(file, i));
      // Every message handled at least once.
      const seen = new Set(records.map((r) => r.key * perKey + r.seq));
      expect(seen.size).toBe(MESSAGES);
      const duplicates = records.length - MESSAGES;

      // Per key, across the group in start order: each message is the next in sequence, or a replay
      // going back — and replays only after the kill.
      const byKey = new Map<number, Handled[]>();
      for (const r of records) byKey.get(r.key)?.push(r) ?? byKey.set(r.key, [r]);
      let replays = 0;
      const violations: string[] = [];
      for (const [key, list] of byKey) {
        list.sort((a, b) => a.start - b.start);
        if (list[0].seq !== 0) violations.push(`k${key} starts at ${list[0].seq}`);
        for (let i = 1; i < list.length; i++) {
          const prev = list[i - 1].seq;
          const seq = list[i].seq;
          if (seq === prev + 1) continue;
          if (seq <= prev && list[i].start >= killedAt) replays++;
          else violations.push(`k${key}: ${seq} after ${prev} (member ${list[i].member})`);
        }
        // Within one member a key never runs two messages at once.
        for (let m = 0; m < MEMBERS; m++) {
          const own = list.filter((r) => r.member === m);
          for (let i = 1; i < own.length; i++) {
            if (own[i].start < own[i - 1].done) violations.push(`k${key} overlaps in member ${m}`);
          }
        }
      }
      expect(violations.slice(0, 10)).toEqual([]);

      // Committed offsets never beyond an unfinished message: every offset below a sampled commit had
      // finished (somewhere) before the sample was taken.
      const firstDone = new Map<number, number[]>();
      for (const r of records) {
        const list = firstDone.get(r.partition) ?? [];
        list[r.offset] = Math.min(list[r.offset] ?? Number.POSITIVE_INFINITY, r.done);
        firstDone.set(r.partition, list);
      }
      const latestBelow = new Map<number, number[]>(); // prefix max of first completion times
      for (const [p, list] of firstDone) {
        const prefix: number[] = [];
        let max = 0;
        for (let o = 0; o < list.length; o++)
          prefix.push((max = Math.max(max, list[o] ?? Number.POSITIVE_INFINITY)));
        latestBelow.set(p, prefix);
      }
      let checked = 0;
      for (const { at, committed } of samples) {
        for (const [p, offset] of committed) {
          const o = Number(offset);
          if (o <= 0) continue;
          checked++;
          expect({ p, o, finishedBy: (latestBelow.get(p) ?? [])[o - 1] <= at }).toEqual({
            p,
            o,
            finishedBy: true,
          });
        }
      }
      expect(checked).toBeGreaterThan(0);
      expect([...end.values()].reduce((n, high) => n + Number(high), 0)).toBe(MESSAGES);

      console.log(
        `scale-out: ${MESSAGES} messages, ${KEYS} keys, ${PARTITIONS} partitions, ${MEMBERS} members (member 0 SIGKILLed ` +
          `after ${handledBy[victim]} handled); ${records.length} handled, ${duplicates} duplicates ` +
          `(${((duplicates / MESSAGES) * 100).toFixed(2)}%), ${replays} replay starts, ` +
          `per member ${[0, 1, 2].map((m) => records.filter((r) => r.member === m).length).join('/')}; ` +
          `${samples.length} commit samples checked; ${elapsed} ms from first send to all committed (${kind.name})`,
      );
    } finally {
      for (const child of members)
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
