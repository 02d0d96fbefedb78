import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { bundle, type Measures, type Run } from '../harness';
import { rate } from '../stats';
import { type KafkaRunResult, Tally } from './kafka-tally';

/** The command that runs a Node contender (bench/scenarios/kafka-child.ts); its first argument names it. */
export function childCommand(): string[] {
  return [process.execPath, bundle('scenarios/kafka-child.ts')];
}

/** What every contender process is told: the topic, its group, the in-flight bound and what to expect. */
export interface RunSpec {
  topic: string;
  group: string;
  maxInFlight: number;
  messages: number;
  keys: number;
}

/** A run that no longer moves is a failure, not a slow result. */
const RUN_TIMEOUT_MS = 180_000;
/**
 * A restarted process whose log has not grown for this long has stopped: rejoining the group waits at
 * most the killed member's session timeout (10 s), and the slowest contender handles thousands a second.
 */
const STALL_MS = 30_000;

function argsOf(spec: RunSpec, extra: Record<string, string | number> = {}): string[] {
  const all = {
    bootstrap: '127.0.0.1:9092',
    topic: spec.topic,
    group: spec.group,
    'max-in-flight': spec.maxInFlight,
    'max-concurrency': spec.maxInFlight,
    messages: spec.messages,
    keys: spec.keys,
    ...extra,
  };
  return Object.entries(all).flatMap(([name, value]) => [`--${name}`, String(value)]);
}

/**
 * Runs `command` (a contender process) to the end and returns the JSON of its last line. `onLine` sees
 * every line it prints; `stalled`, asked every second, says when to give up on it. A run killed by
 * either resolves to null; one that takes longer than `timeoutMs` fails.
 */
function runProcess(
  command: string[],
  onLine: (line: string) => 'kill' | undefined = () => undefined,
  stalled: () => boolean = () => false,
  timeoutMs = RUN_TIMEOUT_MS,
): Promise<KafkaRunResult | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0], command.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
    let last = '';
    let killed = false;
    const kill = () => {
      killed = true;
      child.kill('SIGKILL');
    };
    const started = Date.now();
    const watch = setInterval(() => {
      if (stalled()) kill();
      else if (Date.now() - started > timeoutMs) {
        kill();
        reject(new Error(`${command.join(' ')} did not finish in ${timeoutMs / 1000} s`));
      }
    }, 1000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      last = line;
      if (onLine(line) === 'kill') kill();
    });
    child.once('error', reject);
    child.once('close', (code) => {
      clearInterval(watch);
      if (killed) resolve(null);
      else if (code === 0) resolve(JSON.parse(last) as KafkaRunResult);
      else reject(new Error(`${command.join(' ')} exited with ${code}`));
    });
  });
}

/** One measured run: a fresh process and group reading the whole topic from the beginning. */
export async function measure(
  command: string[],
  spec: RunSpec,
  timeoutMs = RUN_TIMEOUT_MS,
): Promise<KafkaRunResult> {
  return (await runProcess([...command, ...argsOf(spec)], undefined, undefined, timeoutMs)) as KafkaRunResult;
}

export interface KillResult {
  /** Messages handled more than once, over both processes. */
  duplicates: number;
  /** Messages never handled (must be 0: both sides are at-least-once). */
  lost: number;
  /** Per-key order violations, over both processes (a redelivered run of a key counts as in order). */
  violations: number;
  /** The restarted process stopped handling messages before it had handled them all, and was stopped. */
  stalled: boolean;
}

/**
 * SIGKILLs the contender once it has handled `killPoint` messages, restarts it in the same group and
 * lets it finish; both processes log each handled message, and the repeats in the log are duplicates.
 */
export async function killAndRestart(
  command: string[],
  spec: RunSpec,
  killPoint: number,
  log: string,
): Promise<KillResult> {
  rmSync(log, { force: true });
  await runProcess([...command, ...argsOf(spec, { log, 'kill-point': killPoint })], (line) =>
    line === 'kill-point' ? 'kill' : undefined,
  );
  const handledBeforeKill = logLines(log);
  const second = await runProcess([...command, ...argsOf(spec, { log })], undefined, idleFor(log, STALL_MS));
  const lines = logLines(log);
  rmSync(log, { force: true });
  // The killed process reported nothing: its order is checked from its part of the log.
  const killed = new Tally({ messages: spec.messages, keys: spec.keys });
  for (const line of handledBeforeKill) killed.record(line);
  const distinct = new Set(lines).size;
  return {
    duplicates: lines.length - distinct,
    lost: spec.messages - distinct,
    violations: killed.violations + (second?.violations ?? 0),
    stalled: second === null,
  };
}

/** True once the log has not grown for `ms` (after the restarted process first wrote to it). */
function idleFor(log: string, ms: number): () => boolean {
  let size = -1;
  let since = Date.now();
  return () => {
    const now = existsSync(log) ? statSync(log).size : 0;
    if (now !== size) {
      size = now;
      since = Date.now();
    }
    return Date.now() - since > ms;
  };
}

const logLines = (log: string): string[] =>
  existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];

/** What `childRuns` runs: a child's command and the in-flight bound it is given. */
export interface ChildContender {
  readonly command: string[];
  readonly bound: number;
}

/**
 * One `Run` per contender, for `alternate`: each a fresh child reading `topic` (`keys` keys, `messages`
 * in all) in a fresh group named from `group`, after `warmUps` unmeasured passes. `violations` sums the
 * per-key order violations of every run so far.
 */
export function childRuns(
  contenders: Record<string, ChildContender>,
  {
    topic,
    group,
    messages,
    keys,
    warmUps,
  }: { topic: string; group: string; messages: number; keys: number; warmUps: number },
): { runs: Record<string, Run>; violations(): number } {
  let groups = 0;
  let violations = 0;
  const runs: Record<string, Run> = Object.fromEntries(
    Object.entries(contenders).map(([id, c]) => [
      id,
      async (): Promise<Measures> => {
        const spec: RunSpec = { topic, group: `${group}-${groups++}`, maxInFlight: c.bound, messages, keys };
        const result = await measure([...c.command, '--warm-ups', String(warmUps)], spec);
        violations += result.violations;
        console.error(`  ${id}: ${rate(result.rate)} msgs/s`);
        const { rate: msgsPerSecond, running, rss, cold = Number.NaN } = result;
        return {
          rate: msgsPerSecond,
          cold: cold / msgsPerSecond,
          ...(running === undefined ? {} : { running }),
          ...(rss === undefined ? {} : { rss }),
        };
      },
    ]),
  );
  return { runs, violations: () => violations };
}
