import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { build } from 'esbuild';

const ROOT = join(__dirname, '..', '..');

/** Starts a local broker with the repository's script (installs it when missing; idempotent). */
export function startBroker(name: 'redis' | 'nats'): void {
  execFileSync(join(ROOT, 'scripts', 'brokers', `${name}.sh`), ['start'], { stdio: 'pipe' });
}

/**
 * Bundles a TypeScript fixture into `.build/` as plain JavaScript for a child `node` process (Node 20
 * cannot run TypeScript). Broker clients and rxjs stay external, loaded from node_modules.
 */
export async function buildFixture(name: string): Promise<string> {
  const outfile = join(ROOT, '.build', 'fixtures', `${name}.js`);
  await build({
    entryPoints: [join(ROOT, 'spec', 'fixtures', `${name}.ts`)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['rxjs', 'ioredis', '@nats-io/*'],
    logLevel: 'warning',
  });
  return outfile;
}

/** A child `node` process whose stdout is read as one JSON value per line. */
export class ChildConsumer<L> {
  readonly lines: L[] = [];
  readonly exited: Promise<NodeJS.Signals | number | null>;
  private readonly child: ChildProcess;
  private waiters: Array<{ count: number; resolve: () => void }> = [];
  private stderr = '';

  constructor(script: string, config: unknown) {
    this.child = spawn(process.execPath, [script, JSON.stringify(config)], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stderr!.on('data', (chunk) => {
      this.stderr += chunk;
    });
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      this.lines.push(JSON.parse(line) as L);
      const ready = this.waiters.filter((w) => w.count <= this.lines.length);
      this.waiters = this.waiters.filter((w) => w.count > this.lines.length);
      for (const w of ready) w.resolve();
    });
    this.exited = new Promise((resolve) => this.child.on('exit', (code, signal) => resolve(signal ?? code)));
  }

  /** Resolves once `count` lines have come; rejects if the process exits first. */
  waitForLines(count: number): Promise<L[]> {
    const enough = new Promise<void>((resolve) => {
      if (this.lines.length >= count) resolve();
      else this.waiters.push({ count, resolve });
    });
    const exitedEarly = this.exited.then((status) => {
      throw new Error(`consumer exited (${status}) after ${this.lines.length} lines: ${this.stderr}`);
    });
    return Promise.race([enough, exitedEarly]).then(() => this.lines.slice(0, count));
  }

  /** Kills the process outright (no cleanup, no acknowledgements) and waits for it to be gone. */
  async kill(): Promise<void> {
    this.child.kill('SIGKILL');
    await this.exited;
  }
}
