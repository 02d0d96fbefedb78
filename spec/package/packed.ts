import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const ROOT = join(__dirname, '..', '..');

/** The package as built (`npm run build`, which CI runs before the specs); built here when missing. */
export function ensureBuilt(): void {
  if (!existsSync(join(ROOT, 'dist', 'index.mjs'))) {
    execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'pipe' });
  }
}

/**
 * A project in a temporary folder with the package installed from its tarball (`npm pack`), exactly the
 * files a user gets, and the given modules of ours linked beside it (nothing else: no optional peer).
 * Packed without scripts: `prepack` would rebuild dist/ while other specs read it.
 */
export function consumerProject(linked: readonly string[]): { dir: string; remove: () => void } {
  ensureBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'keyed-dispatch-consumer-'));
  const tarball = execFileSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', dir], {
    cwd: ROOT,
    encoding: 'utf8',
  }).trim();
  const installed = join(dir, 'node_modules', 'keyed-dispatch');
  mkdirSync(installed, { recursive: true });
  execFileSync('tar', ['-xzf', join(dir, tarball), '-C', installed, '--strip-components=1']);
  for (const name of linked) {
    const target = join(dir, 'node_modules', name);
    mkdirSync(join(target, '..'), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules', name), target, 'dir');
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
