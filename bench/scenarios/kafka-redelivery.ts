import { type ChildProcess, fork } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { produceKeyedTopic } from '../kafka-topic';
import { bundle, median, minMax, rate, type Scenario, table } from '../lib';

const MESSAGES = 100_000;
const KEYS = 1000;
const PARTITIONS = 12;
/** Longest a run may take to handle every message before it is reported with what is missing. */
const RUN_LIMIT_MS = 180_000;

/** How a member commits: the cadence and whether commits carry the finished offsets above them. */
interface Commits {
  name: string;
  intervalMs: number;
  everyMessages: number;
  metadataMaxBytes: number;
}

const CONFIGS: Commits[] = [
  { name: 'before: every 1 s, plain offsets', intervalMs: 1000, everyMessages: 2 ** 30, metadataMaxBytes: 0 },
  { name: 'every 1 s, with metadata', intervalMs: 1000, everyMessages: 2 ** 30, metadataMaxBytes: 4096 },
  {
    name: 'every 200 messages or 1 s, plain offsets',
    intervalMs: 1000,
    everyMessages: 200,
    metadataMaxBytes: 0,
  },
  {
    name: 'new defaults: every 200 messages or 1 s, with metadata',
    intervalMs: 1000,
    everyMessages: 200,
    metadataMaxBytes: 4096,
  },
];

interface Line {
  key: number;
  seq: number;
  partition: number;
  at: number;
}

interface Outcome {
  lost: number;
  handledTwice: number;
  orderViolations: number;
  restartDelayMs: number;
  /** msgs/s of the first member(s) before the kill. */
  perSecond: number;
}

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function readLines(file: string): Line[] {
  if (!existsSync(file)) return [];
  const lines: Line[] = [];
  for (const text of readFileSync(file, 'utf8').split('\n')) {
    if (text === '') continue;
    const [key, seq, partition, at] = text.split(' ').map(Number);
    lines.push({ key, seq, partition, at });
  }
  return lines;
}

/**
 * The partitions the victim was working on when it died: those it handled in its last 2 s whose latest
 * line before the kill is its own. A partition a rebalance had already moved to another member is not
 * waiting for the victim's session to time out.
 */
function heldAtKill(victimLines: Line[], everyLine: Line[], killedAt: number): Set<number> {
  const latest = new Map<number, number>();
  for (const line of everyLine) {
    if (line.at <= killedAt && line.at > (latest.get(line.partition) ?? -1))
      latest.set(line.partition, line.at);
  }
  const held = new Set<number>();
  for (const line of victimLines) {
    if (line.at > killedAt - 2000 && latest.get(line.partition) === line.at) held.add(line.partition);
  }
  return held;
}

/** Distinct messages handled. */
const distinct = (lines: Line[]) => new Set(lines.map((l) => l.key * MESSAGES + l.seq)).size;

/**
 * Each key's handled sequence numbers in time order must go up one at a time, except where a replay
 * starts again lower (and then goes on one at a time): anything that skips ahead is a violation.
 */
function orderViolations(lines: Line[]): number {
  const sorted = [...lines].sort((a, b) => a.at - b.at);
  const previous = new Int32Array(KEYS).fill(-1);
  let violations = 0;
  for (const { key, seq } of sorted) {
    if (seq > previous[key] + 1) violations++;
    previous[key] = seq;
  }
  return violations;
}

class Member {
  readonly process: ChildProcess;
  handled = 0;
  constructor(child: string, args: string[]) {
    this.process = fork(child, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.process.on('message', (m: { handled: number }) => {
      this.handled = m.handled;
    });
  }
  kill(): void {
    this.process.kill('SIGKILL');
  }
  async close(): Promise<void> {
    if (this.process.exitCode !== null || this.process.signalCode !== null) return;
    const exited = new Promise((resolve) => this.process.once('exit', resolve));
    this.process.send('close');
    await Promise.race([exited, sleep(40_000)]);
    if (this.process.exitCode === null) this.process.kill('SIGKILL');
  }
}

async function waitFor(condition: () => boolean, limitMs = RUN_LIMIT_MS): Promise<void> {
  const until = Date.now() + limitMs;
  while (!condition() && Date.now() < until) await sleep(50);
}

/**
 * One run: `members` consumers of a fresh group read the topic; once they have handled about
 * `killAt` messages the second (or only) one is SIGKILLed and a new member starts in its place.
 */
async function runOnce(
  child: string,
  topic: string,
  handler: '1ms' | 'rand5' | 'slowkey',
  members: number,
  killAt: number,
  commits: Commits,
  dir: string,
  run: number,
): Promise<Outcome> {
  const group = `redelivery-${process.pid}-${run}`;
  const files: string[] = [];
  const start = (): Member => {
    const file = join(dir, `${run}-${files.length}.log`);
    files.push(file);
    const args = [group, topic, file, handler, String(commits.intervalMs), String(commits.everyMessages)];
    return new Member(child, [...args, String(commits.metadataMaxBytes)]);
  };
  const running = Array.from({ length: members }, start);
  const victim = running[members === 1 ? 0 : 1];
  await waitFor(() => running.reduce((n, m) => n + m.handled, 0) >= killAt);
  const killedAt = now();
  victim.kill();
  const victimLines = readLines(files[running.indexOf(victim)]);
  const beforeKill = files.flatMap(readLines);
  const firstAt = Math.min(...beforeKill.map((l) => l.at));
  const perSecond = (beforeKill.length * 1000) / (killedAt - firstAt);
  const victimPartitions = heldAtKill(victimLines, beforeKill, killedAt);
  running.push(start());
  const all = () => files.flatMap(readLines);
  await waitFor(() => {
    const lines = all();
    return distinct(lines) >= MESSAGES;
  });
  await sleep(1000);
  await Promise.all(running.filter((m) => m !== victim).map((m) => m.close()));
  const lines = all();
  // The victim may still have written a line or two between the clock read and the signal landing.
  const others = files.filter((_, i) => i !== running.indexOf(victim)).flatMap(readLines);
  const after = others.filter((l) => l.at > killedAt && victimPartitions.has(l.partition));
  return {
    lost: MESSAGES - distinct(lines),
    handledTwice: lines.length - distinct(lines),
    orderViolations: orderViolations(lines),
    restartDelayMs: after.length === 0 ? Number.NaN : Math.min(...after.map((l) => l.at)) - killedAt,
    perSecond,
  };
}

/** msgs/s of one member of a fresh group reading the whole topic, from its first message to its last. */
async function throughputOnce(
  child: string,
  topic: string,
  commits: Commits,
  dir: string,
  run: number,
): Promise<number> {
  const file = join(dir, `${run}-throughput.log`);
  const args = [`redelivery-${process.pid}-${run}`, topic, file, '1ms', String(commits.intervalMs)];
  const member = new Member(child, [
    ...args,
    String(commits.everyMessages),
    String(commits.metadataMaxBytes),
  ]);
  await waitFor(() => member.handled >= MESSAGES);
  await member.close();
  const times = readLines(file).map((l) => l.at);
  return ((times.length - 1) * 1000) / (Math.max(...times) - Math.min(...times));
}

const produce = (kafka: Kafka, topic: string): Promise<void> =>
  produceKeyedTopic(kafka, topic, { messages: MESSAGES, keys: KEYS, partitions: PARTITIONS });

const scenario: Scenario = {
  title: `Kafka redelivery after a SIGKILL: ${MESSAGES / 1000}k messages over ${KEYS} keys on ${PARTITIONS} partitions (argument: trials, default 1)`,
  async run(args) {
    const trials = Number(args[0] ?? 1);
    const child = bundle('scenarios/kafka-redelivery-child.ts');
    const kafka = new Kafka({
      clientId: 'bench-redelivery',
      brokers: ['127.0.0.1:9092'],
      logLevel: logLevel.NOTHING,
    });
    const topic = `redelivery-${process.pid}-${Date.now().toString(36)}`;
    await produce(kafka, topic);
    const dir = mkdtempSync(join(tmpdir(), 'kafka-redelivery-'));
    const workloads = [
      {
        name: '(a) 1 consumer, 1 ms handlers, killed at ~50k and restarted',
        handler: '1ms' as const,
        members: 1,
        killAt: 50_000,
      },
      {
        name: '(b) 3 consumers, 0–5 ms handlers, one killed at ~33k, one started',
        handler: 'rand5' as const,
        members: 3,
        killAt: 33_000,
      },
      {
        name: '(c) 1 consumer, 1 ms handlers but 50 ms for one key (it holds its partition back), killed at ~50k and restarted',
        handler: 'slowkey' as const,
        members: 1,
        killAt: 50_000,
      },
    ];
    const rows: Array<Array<string | number>> = [];
    let run = 0;
    for (const workload of workloads) {
      for (const commits of CONFIGS) {
        for (let t = 0; t < trials; t++) {
          const o = await runOnce(
            child,
            topic,
            workload.handler,
            workload.members,
            workload.killAt,
            commits,
            dir,
            run++,
          );
          const row = [
            workload.name.slice(0, 3),
            commits.name,
            o.lost,
            `${o.handledTwice} (${((o.handledTwice / MESSAGES) * 100).toFixed(2)} %)`,
            o.orderViolations,
            `${(o.restartDelayMs / 1000).toFixed(1)} s`,
            `${rate(o.perSecond)}/s`,
          ];
          console.log(`  ${row.join(' | ')}`);
          rows.push(row);
        }
      }
    }
    // Throughput without a kill, old and new cadence taking turns (each first every other round) so a
    // busy moment hits both alike; the cost is the median of the per-round ratios.
    const throughput = new Map<string, number[]>();
    const compared = [CONFIGS[0], CONFIGS[3]];
    const ratios: number[] = [];
    for (let t = 0; t < 5 * trials; t++) {
      const round = new Map<string, number>();
      for (const commits of t % 2 === 0 ? compared : [...compared].reverse()) {
        const perSecond = await throughputOnce(child, topic, commits, dir, run++);
        console.log(`  throughput ${commits.name}: ${rate(perSecond)}/s`);
        round.set(commits.name, perSecond);
        throughput.set(commits.name, [...(throughput.get(commits.name) ?? []), perSecond]);
      }
      ratios.push((round.get(compared[1].name) as number) / (round.get(compared[0].name) as number));
    }
    const throughputRows = compared.map((c, i) => {
      const values = throughput.get(c.name) ?? [];
      const [lo, hi] = minMax(values);
      const [rlo, rhi] = minMax(ratios);
      const ratio = i === 0 ? '1' : `${median(ratios).toFixed(3)} (${rlo.toFixed(3)}–${rhi.toFixed(3)})`;
      return [c.name, `${rate(median(values))}/s`, `${rate(lo)}–${rate(hi)}`, ratio];
    });
    rmSync(dir, { recursive: true, force: true });
    const admin = kafka.admin();
    await admin.connect();
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();
    const out = [
      `${workloads.map((w) => w.name).join('; ')}. Window 256 per consumer; session timeout 10 s.`,
      '',
      table(
        [
          'workload',
          'commits',
          'lost',
          'handled twice',
          'order violations',
          'restart delay',
          'rate before the kill',
        ],
        rows,
      ),
      '',
      'Handled twice: handler runs beyond one per message (of 100,000). Order violations: a key whose messages, in the ' +
        'order they finished, skip ahead (a replay starting lower and going on in order is allowed). Restart delay: from the ' +
        'SIGKILL to the first message handled again on a partition the killed member held when it died (it handled the ' +
        "partition's latest message before the kill) — about the killed member's session timeout (kafkajs has no static " +
        'membership, so nothing shorter is possible with it).',
      '',
      `Throughput without a kill (1 consumer, 1 ms handlers, window 256, ${5 * trials} runs each, taking turns):`,
      '',
      table(['commits', 'median msgs/s', 'range', 'median of per-round ratios'], throughputRows),
    ].join('\n');
    console.log(out);
    return out;
  },
};

export default scenario;
