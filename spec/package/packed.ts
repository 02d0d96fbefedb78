import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const ROOT = join(__dirname, '..', '..');

/**
 * The package as built (`npm run build`, which CI runs before the specs); built here when missing or
 * older than a source. Specs run side by side: one builds, under a lock, while the others wait for it.
 */
export function ensureBuilt(): void {
  if (builtAfterSources()) return;
  const lock = join(ROOT, 'node_modules', '.keyed-dispatch-build.lock');
  while (!tryMkdir(lock)) {
    // A lock older than any build is one a killed run left.
    const lockedAt = statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
    if (Date.now() - lockedAt > BUILD_MS) rmSync(lock, { force: true, recursive: true });
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
  }
  try {
    if (!builtAfterSources()) execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'pipe' });
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Longer than any build takes. */
const BUILD_MS = 120_000;

/** Whether dist/ was built after the last change to a source file or the build's configuration. */
function builtAfterSources(): boolean {
  const built = join(ROOT, 'dist', 'index.mjs');
  if (!existsSync(built)) return false;
  const builtAt = statSync(built).mtimeMs;
  const sources = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).map((f) =>
    join('src', f),
  );
  return [...sources, 'package.json', 'tsup.config.ts'].every(
    (f) => statSync(join(ROOT, f)).mtimeMs <= builtAt,
  );
}

function tryMkdir(path: string): boolean {
  try {
    mkdirSync(path);
    return true;
  } catch {
    return false;
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
