import { execFile } from 'node:child_process';
import { join } from 'node:path';

function runFixture(mode: string): Promise<{ code: number | null; stdout: string }> {
  const fixture = join(__dirname, '..', 'fixtures', 'finished-pipeline.ts');
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', fixture, mode],
      { timeout: 20_000 },
      (error, stdout) => {
        if (error?.killed) reject(new Error(`the process did not exit by itself (${mode})`));
        else resolve({ code: child.exitCode, stdout });
      },
    );
  });
}

describe('a finished pipeline', () => {
  it('lets the process exit once the source completes and every handler has finished', async () => {
    const { code, stdout } = await runFixture('complete');
    expect(code).toBe(0);
    expect(stdout).toContain('complete 50');
  });

  it('lets the process exit after an unsubscribe cancels handlers waiting on lane timers', async () => {
    const { code, stdout } = await runFixture('unsubscribe');
    expect(code).toBe(0);
    expect(stdout).toContain('unsubscribed');
  });

  it('lets the process exit on the shared executor', async () => {
    const { code, stdout } = await runFixture('shared');
    expect(code).toBe(0);
    expect(stdout).toContain('complete 50');
  });
});
