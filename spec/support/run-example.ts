import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

export interface ExampleRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface ExampleRunOptions {
  /** Arguments after the example's name. */
  readonly args?: readonly string[];
  /** A folder put first on PATH, as a reader's machine has its own `node` (and `npm`) there. */
  readonly pathFirst?: string;
  /** Variables added to the environment. */
  readonly env?: Readonly<Record<string, string>>;
  /** A run still going after this long is killed. Default 120 s. */
  readonly timeoutMs?: number;
}

/**
 * Runs `npm run example -- <name>`, the command a reader types (npm's `--silent` keeps its banner out of
 * the output), and resolves once it exits by itself; a run still going after `timeoutMs` is killed and
 * reported with its signal, so a hanging example fails.
 */
export function runExample(name: string, options: ExampleRunOptions = {}): Promise<ExampleRun> {
  const { args = [], pathFirst, env = {}, timeoutMs = 120_000 } = options;
  const path = pathFirst === undefined ? process.env.PATH : `${pathFirst}${delimiter}${process.env.PATH}`;
  const child = spawn('npm', ['run', '--silent', 'example', '--', name, ...args], {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, npm_config_update_notifier: 'false', ...env, PATH: path },
  });
  // No input: the demo, which waits for Enter to stop its dashboard, reads the end of it instead.
  child.stdin.end();
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  // npm and the example run as one process group, so a hanging one is killed whole.
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), timeoutMs);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** The least major version the examples run on, whatever `node` is first on PATH: the development Node's. */
export const EXAMPLES_NODE_MAJOR = 24;

/** The major version of a `vN.N.N` version string. */
export function majorOf(version: string): number {
  return Number(/^v(\d+)\./.exec(version)?.[1] ?? Number.NaN);
}

/**
 * A Node on this machine older than `EXAMPLES_NODE_MAJOR`: the first on PATH, else one that
 * scripts/node.sh installed (CI installs Node 22, the floor), as its bin folder and version; null when
 * there is none.
 */
export function otherNode(): { bin: string; version: string } | null {
  const installed = existsSync(join(ROOT, '.node'))
    ? readdirSync(join(ROOT, '.node')).map((major) => join(ROOT, '.node', major, 'bin'))
    : [];
  for (const bin of [...(process.env.PATH ?? '').split(delimiter), ...installed]) {
    if (bin === '' || !existsSync(join(bin, 'node'))) continue;
    const version = spawnSync(join(bin, 'node'), ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? '';
    if (majorOf(version) < EXAMPLES_NODE_MAJOR) return { bin, version };
  }
  return null;
}
