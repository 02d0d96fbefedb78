/**
 * A receiver written with the receiver core (see docs/writing-a-receiver.md): every `*.msg` file in a
 * spool directory is a message; a handled or dead-lettered one is deleted, a failed one is renamed to
 * `*.msg.failed`, set aside for a person (left in place, it would fail again on every scan).
 *
 *   npm run example -- spool-receiver
 */
import { mkdtemp, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastValueFrom } from 'rxjs';
import {
  ClosableReceiver,
  keyedDispatch,
  PullSession,
  type ReceiverSink,
  type SettledListener,
  type Settlement,
} from '../src';

export interface SpoolFile {
  readonly name: string;
  readonly text: string;
}

export interface SpoolOptions {
  /** How often the directory is scanned while there is demand and nothing to read. Default 100 ms. */
  pollMs?: number;
  onSettled?: SettledListener<SpoolFile>;
}

/** A receiver over the `*.msg` files of `dir`, read in name order. `close()` stops it gracefully. */
export function fromSpool(dir: string, options: SpoolOptions = {}): ClosableReceiver<SpoolFile> {
  const closeTimeoutMs = 5_000;
  return new ClosableReceiver((sink) => new SpoolSession(dir, options, sink), closeTimeoutMs);
}

/** One subscription: a polling loop, and acknowledgement by deleting or renaming the file. */
class SpoolSession extends PullSession<SpoolFile> {
  /** Delivered and not yet settled: a later scan must not deliver them again. */
  private readonly held = new Set<string>();

  constructor(
    private readonly dir: string,
    private readonly options: SpoolOptions,
    sink: ReceiverSink<SpoolFile>,
  ) {
    super(sink, options.onSettled);
    this.runLoop(() => this.poll());
  }

  /** While there is demand: reads at most that many files, or waits for the next scan. */
  private async poll(): Promise<void> {
    while (await this.whenDemand()) {
      const names = (await readdir(this.dir))
        .filter((name) => name.endsWith('.msg') && !this.held.has(name))
        .sort()
        .slice(0, this.demand);
      for (const name of names) {
        const text = await readIfThere(join(this.dir, name));
        // Gone since the scan: it was held then, and its acknowledgement has removed it meanwhile.
        if (text === undefined) continue;
        this.held.add(name);
        // Refused once intake has stopped: the file stays for the next run.
        if (!this.deliver({ name, text })) return;
      }
      if (names.length === 0) await this.wait(this.options.pollMs ?? 100);
    }
  }

  /** Called once the handler finished; `onSettled` is told after the returned promise resolves. */
  protected override async acknowledge(file: SpoolFile, outcome: Settlement): Promise<void> {
    const path = join(this.dir, file.name);
    if (outcome === 'failed') await rename(path, `${path}.failed`);
    else await unlink(path);
    this.held.delete(file.name);
  }
}

/** The file's text, or undefined when it no longer exists. */
async function readIfThere(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Spools a few orders, handles them one account at a time, and closes once all are settled. */
async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'spool-'));
  for (const [i, account] of ['alice', 'bob', 'alice', 'carol', 'bob'].entries()) {
    await writeFile(join(dir, `${String(i).padStart(4, '0')}-${account}.msg`), `order ${i} of ${account}`);
  }
  let settled = 0;
  const spool = fromSpool(dir, {
    onSettled: (file, outcome) => {
      console.log(`${file.name}: ${outcome}`);
      if (++settled === 5) void spool.close();
    },
  });
  await lastValueFrom(
    spool.pipe(
      keyedDispatch({
        key: (file: SpoolFile) => file.name.slice(5, -4),
        handle: async (file: SpoolFile) => console.log(`handling ${file.text}`),
      }),
    ),
    { defaultValue: undefined },
  );
  console.log('left in the spool:', await readdir(dir));
}

if (require.main === module) void main();
