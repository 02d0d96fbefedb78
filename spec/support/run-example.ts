import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

export interface ExampleRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The command `npm start` runs the demo with, so the examples are run exactly as a reader runs them. */
function exampleRunner(): string {
  const start: string = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.start;
  const runner = start.split('examples/demo.ts')[0].trim();
  if (runner === start.trim()) throw new Error(`scripts.start does not run examples/demo.ts: ${start}`);
  return runner;
}

/**
 * Runs `examples/<file>` with the start script's runner and resolves once it exits by itself; a run
 * still going after `timeoutMs` is killed and reported with its signal, so a hanging example fails.
 */
export function runExample(file: string, args: string[] = [], timeoutMs = 120_000): Promise<ExampleRun> {
  const command = [exampleRunner(), join('examples', file), ...args].join(' ');
  const child = spawn(command, {
    cwd: ROOT,
    shell: true,
    detached: true,
    env: { ...process.env, PATH: `${join(ROOT, 'node_modules', '.bin')}${delimiter}${process.env.PATH}` },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  // The shell and the example run as one process group, so a hanging one is killed whole.
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), timeoutMs);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}
