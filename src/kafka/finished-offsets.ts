/**
 * The commit metadata that says which offsets above a committed offset already finished, so a new owner
 * of the partition skips them instead of handling them again.
 *
 * Format: `kd1:` followed by base64 of unsigned LEB128 varints, in pairs `gap, length`: a finished run
 * starts `gap` offsets after the end of the previous run (the first after the committed offset) and
 * covers `length` offsets. Runs, not a bitmap, because finished work is mostly long contiguous stretches
 * broken by a few slow keys.
 */

/** Offsets `from` (inclusive) to `to` (exclusive), counted from the committed offset. */
export interface FinishedRun {
  from: number;
  to: number;
}

const PREFIX = 'kd1:';

/** Kafka brokers' default `offset.metadata.max.bytes`: metadata beyond it fails the whole commit. */
export const DEFAULT_METADATA_MAX_BYTES = 4096;

/** Characters of base64 for `bytes` bytes. */
const base64Length = (bytes: number): number => Math.ceil(bytes / 3) * 4;

/** Appends `value` (a non-negative safe integer) as an unsigned LEB128 varint. */
function writeVarint(out: number[], value: number): void {
  while (value >= 0x80) {
    out.push((value % 0x80) | 0x80);
    value = Math.floor(value / 0x80);
  }
  out.push(value);
}

/**
 * Encodes finished runs (sorted, not overlapping, `from` ≥ 1 since the committed offset itself is
 * unfinished) in at most `maxBytes` characters. When they do not all fit, the lowest runs that fit are
 * kept (the rest is handled again after a restart, as without metadata); returns `undefined` when not
 * even one fits, or there are none: a plain commit.
 */
export function encodeFinished(runs: readonly FinishedRun[], maxBytes: number): string | undefined {
  const bytes: number[] = [];
  let kept = 0;
  let end = 0;
  for (const run of runs) {
    const before = bytes.length;
    writeVarint(bytes, run.from - end);
    writeVarint(bytes, run.to - run.from);
    if (PREFIX.length + base64Length(bytes.length) > maxBytes) {
      bytes.length = before;
      break;
    }
    end = run.to;
    kept++;
  }
  if (kept === 0) return undefined;
  return PREFIX + Buffer.from(bytes).toString('base64');
}

/**
 * The finished runs in commit metadata, or none when it is absent, written by something else or
 * malformed (then everything above the committed offset is handled again: at-least-once holds).
 */
export function decodeFinished(metadata: string | null | undefined): FinishedRun[] {
  if (typeof metadata !== 'string' || !metadata.startsWith(PREFIX)) return [];
  const bytes = Buffer.from(metadata.slice(PREFIX.length), 'base64');
  const values: number[] = [];
  let value = 0;
  let scale = 1;
  for (const byte of bytes) {
    value += (byte & 0x7f) * scale;
    if (byte & 0x80) {
      scale *= 0x80;
      if (scale > 2 ** 49) return [];
      continue;
    }
    values.push(value);
    value = 0;
    scale = 1;
  }
  if (scale !== 1 || values.length % 2 !== 0) return [];
  const runs: FinishedRun[] = [];
  let end = 0;
  for (let i = 0; i < values.length; i += 2) {
    const from = end + values[i];
    const to = from + values[i + 1];
    if (to <= from || (i === 0 && from < 1)) return [];
    runs.push({ from, to });
    end = to;
  }
  return runs;
}
