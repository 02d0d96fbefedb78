import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

export interface DemoExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/**
 * `npm start -- --hold` run as a reader runs it, in a process group of its own (as a terminal's
 * foreground job is), so that a spec can signal npm alone (a process manager) or the whole group (Ctrl-C).
 */
export class HeldDemo {
  private output = '';
  private readonly exit: Promise<DemoExit>;

  private constructor(private readonly child: ChildProcess) {
    child.stdout?.on('data', (chunk) => (this.output += chunk));
    child.stderr?.on('data', (chunk) => (this.output += chunk));
    this.exit = new Promise((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code, signal) => resolve({ code, signal }));
    });
  }

  /** `npm start` with `args` after `--`; `--hold` by default. */
  static start(args: readonly string[] = ['--hold']): HeldDemo {
    return new HeldDemo(
      spawn('npm', ['start', '--', ...args], {
        cwd: ROOT,
        detached: true,
        env: { ...process.env, npm_config_update_notifier: 'false' },
      }),
    );
  }

  /** What it printed so far, stdout and stderr. */
  get printed(): string {
    return this.output;
  }

  /** The dashboard's address, once printed. */
  async url(timeoutMs = 60_000): Promise<string> {
    return (await this.printedMatch(/^dashboard +(http:\/\/\S+)/m, timeoutMs))[1];
  }

  /** Waits until what it printed matches `pattern`, and returns the match. */
  async printedMatch(pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
    await this.until(() => pattern.test(this.output), String(pattern), timeoutMs);
    return this.output.match(pattern) as RegExpMatchArray;
  }

  /** Types `text` on its standard input, as a reader at the terminal. */
  type(text: string): void {
    this.child.stdin?.write(text);
  }

  /** The live lines printed so far (one every 2 s without a terminal). */
  liveLines(): string[] {
    return this.output.split('\n').filter((line) => /\bmsgs\/s\b/.test(line));
  }

  /** Waits until `count` live lines are printed, and returns them. */
  async waitForLiveLines(count: number, timeoutMs = 60_000): Promise<string[]> {
    await this.until(() => this.liveLines().length >= count, `${count} live lines`, timeoutMs);
    return this.liveLines();
  }

  /** `signal` to npm alone, as a process manager (systemd, a container runtime) stops the command it started. */
  signal(signal: NodeJS.Signals): void {
    process.kill(this.child.pid as number, signal);
  }

  /** `signal` to every process of the group, as a terminal sends Ctrl-C (SIGINT) to its foreground job. */
  signalGroup(signal: NodeJS.Signals): void {
    process.kill(-(this.child.pid as number), signal);
  }

  /** How npm exited; rejects with what was printed when it has not within `timeoutMs`. */
  async exited(timeoutMs: number): Promise<DemoExit> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`still running after ${timeoutMs} ms; printed:\n${this.output.slice(-2000)}`)),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([this.exit, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Whether any process of the group is still there (the demo, npm, a helper of theirs). */
  groupAlive(): boolean {
    try {
      process.kill(-(this.child.pid as number), 0);
      return true;
    } catch {
      return false;
    }
  }

  /** Ends whatever is left of the group: after a failed expectation, nothing keeps serving. */
  kill(): void {
    if (this.groupAlive()) process.kill(-(this.child.pid as number), 'SIGKILL');
  }

  private async until(done: () => boolean, what: string, timeoutMs: number): Promise<void> {
    const end = Date.now() + timeoutMs;
    let exited = false;
    void this.exit.then(() => (exited = true));
    while (!done()) {
      if (exited || Date.now() > end) {
        throw new Error(
          `${exited ? 'exited' : `nothing after ${timeoutMs} ms`} before ${what}; printed:\n${this.output.slice(-2000)}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
