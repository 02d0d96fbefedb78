import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/**
 * A NATS server with JetStream of a spec's own on `port` (never the shared one on 4222), started and
 * stopped with the repository's script; its JetStream store outlives a restart. `forget()` removes it.
 */
export class OwnNats {
  constructor(
    readonly port: number,
    private readonly monitorPort: number,
  ) {}

  start(): void {
    this.script('start');
  }

  stop(): void {
    this.script('stop');
  }

  /** Kills the server outright: it goes without telling its clients, as a crashed or lost one does. */
  async kill(): Promise<void> {
    const pid = Number(readFileSync(join(this.files, 'nats.pid'), 'utf8'));
    process.kill(pid, 'SIGKILL');
    for (const until = Date.now() + 10_000; alive(pid) && Date.now() < until; ) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Deletes the JetStream store, so the next start begins empty. Call it stopped. */
  forget(): void {
    rmSync(join(this.files, 'nats'), { recursive: true, force: true });
  }

  /** Where the script keeps this server's files. */
  private get files(): string {
    return join(ROOT, '.brokers', `nats-${this.port}`);
  }

  private script(command: 'start' | 'stop'): void {
    execFileSync(join(ROOT, 'scripts', 'brokers', 'nats.sh'), [command], {
      env: { ...process.env, NATS_PORT: String(this.port), NATS_MONITOR_PORT: String(this.monitorPort) },
      stdio: 'pipe',
    });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
