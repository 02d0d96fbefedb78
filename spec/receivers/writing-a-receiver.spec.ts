import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DispatchStats, keyedDispatch, retryPolicy } from 'keyed-dispatch';
import { lastValueFrom, toArray } from 'rxjs';
import { fromSpool, type SpoolFile } from '../../examples/spool-receiver';
import { deferred } from '../support/waits';

const ROOT = join(__dirname, '..', '..');
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'spool-spec-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Spools `perKey` files for each of `keys`, interleaved, named so that name order is send order. */
async function spool(keys: string[], perKey: number): Promise<void> {
  let n = 0;
  for (let seq = 0; seq < perKey; seq++) {
    for (const key of keys)
      await writeFile(join(dir, `${String(n++).padStart(4, '0')}-${key}.msg`), String(seq));
  }
}

const keyOf = (file: SpoolFile) => file.name.slice(5, -4);

describe('the spool receiver of docs/writing-a-receiver.md', () => {
  it('runs through keyedDispatch: each key in order, handled files deleted, a failed one renamed, close() completes', async () => {
    await spool(['a', 'b', 'c'], 4);
    const settled = deferred();
    const outcomes: string[] = [];
    const receiver = fromSpool(dir, {
      pollMs: 10,
      onSettled: (file, outcome) => {
        outcomes.push(`${file.name}:${outcome}`);
        if (outcomes.length === 12) settled.resolve();
      },
    });
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch({
          maxInFlight: 4,
          key: keyOf,
          failurePolicy: retryPolicy({ maxAttempts: 1 }),
          handle: async (file: SpoolFile) => {
            if (file.name === '0004-b.msg') throw new Error('cannot handle');
            return `${keyOf(file)}${file.text}`;
          },
        }),
        toArray(),
      ),
    );
    await settled.promise;
    await receiver.close();
    const handled = await output;

    for (const key of ['a', 'c'])
      expect(handled.filter((h) => h[0] === key)).toEqual([0, 1, 2, 3].map((n) => `${key}${n}`));
    expect(handled.filter((h) => h[0] === 'b')).toEqual(['b0', 'b2', 'b3']);
    expect(outcomes).toContain('0004-b.msg:failed');
    expect(outcomes.filter((o) => o.endsWith(':done'))).toHaveLength(11);
    expect(await readdir(dir)).toEqual(['0004-b.msg.failed']);
  });

  it('reads no more files than the window asks for, and picks up files spooled later', async () => {
    await spool(['a', 'b', 'c', 'd'], 3);
    const stats = new DispatchStats();
    let maxHeld = 0;
    let handled = 0;
    const done = deferred();
    const receiver = fromSpool(dir, { pollMs: 10 });
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch({
          maxInFlight: 3,
          stats,
          key: keyOf,
          handle: async () => {
            maxHeld = Math.max(maxHeld, stats.snapshot().inFlight);
            await new Promise((resolve) => setTimeout(resolve, 2));
            if (++handled === 13) done.resolve();
          },
        }),
      ),
      { defaultValue: undefined },
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    await writeFile(join(dir, '9999-e.msg'), 'late');
    await done.promise;
    await receiver.close();
    await output;
    expect(maxHeld).toBeLessThanOrEqual(3);
    expect(await readdir(dir)).toEqual([]);
  });

  it('skips a file that an acknowledgement removed between a scan and its read', async () => {
    await spool(['a'], 2);
    // The scan lists a file that is gone by the time it is read (acknowledged and deleted meanwhile).
    const scan = jest.spyOn(require('node:fs/promises') as typeof import('node:fs/promises'), 'readdir');
    scan.mockImplementationOnce((async () => ['0000-gone.msg', ...(await readdir(dir))]) as never);
    const handled: string[] = [];
    const receiver = fromSpool(dir, { pollMs: 10 });
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch({
          key: keyOf,
          handle: async (file: SpoolFile) => {
            handled.push(file.name);
            if (handled.length === 2) void receiver.close();
          },
        }),
      ),
      { defaultValue: undefined },
    );
    await output;
    scan.mockRestore();
    expect(handled).toEqual(['0000-a.msg', '0001-a.msg']);
  });

  it('is shown in the guide, its session class included, exactly as examples/spool-receiver.ts has it', () => {
    const guide = readFileSync(join(ROOT, 'docs', 'writing-a-receiver.md'), 'utf8');
    const example = readFileSync(join(ROOT, 'examples', 'spool-receiver.ts'), 'utf8');
    const shown = guide.split('```ts\n')[1].split('```')[0];
    expect(shown).toContain('class SpoolSession extends PullSession<SpoolFile> {');
    expect(example).toContain(shown);
  });
});
