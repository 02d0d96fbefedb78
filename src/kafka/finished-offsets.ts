/**
 * The commit metadata that says which offsets above a committed offset already finished, so a new owner
 * of the partition skips them instead of handling them again.
 *
 * Format: `kd2:`, the committed offset the runs count from, `:`, then base64 of unsigned LEB128 varints,
 * in pairs `gap, length`: a finished run starts `gap` offsets after the end of the previous run (the first
 * after the committed offset) and covers `length` offsets. Runs, not a bitmap, because finished work is
 * mostly long contiguous stretches broken by a few slow keys. The offset is written out because the
 * metadata only holds for it: a tool that moves a group's offset and keeps its metadata (a mirror's
 * offset translation) would otherwise have the runs read from the wrong place, skipping records that
 * never ran.
 */

/** Offsets `from` (inclusive) to `to` (exclusive), counted from the committed offset. */
export interface FinishedRun {
  from: number;
  to: number;
}

const PREFIX = 'kd2:';

/** Base64 as `Buffer.toString` writes it: anything else is not ours (`Buffer.from` would skip it). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The start of the metadata written for runs above the committed `offset`. */
const headerOf = (offset: string): string => `${PREFIX}${offset}:`;

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
 * Encodes finished runs above the committed `offset` (sorted, not overlapping, `from` ≥ 1 since the
 * committed offset itself is unfinished) in at most `maxBytes` characters. When they do not all fit,
 * the lowest runs that fit are kept (the rest is handled again after a restart, as without metadata);
 * returns `undefined` when not even one fits, or there are none: a plain commit.
 */
export function encodeFinished(
  runs: readonly FinishedRun[],
  maxBytes: number,
  offset: string,
): string | undefined {
  const header = headerOf(offset);
  const bytes: number[] = [];
  let kept = 0;
  let end = 0;
  for (const run of runs) {
    // Out of order or empty (offsets that went backwards): what came before it is still right.
    if (run.from < Math.max(end, 1) || run.to <= run.from) break;
    const before = bytes.length;
    writeVarint(bytes, run.from - end);
    writeVarint(bytes, run.to - run.from);
    if (header.length + base64Length(bytes.length) > maxBytes) {
      bytes.length = before;
      break;
    }
    end = run.to;
    kept++;
  }
  if (kept === 0) return undefined;
  return header + Buffer.from(bytes).toString('base64');
}

/**
 * The finished runs that commit metadata records above the committed `offset`, or none when it is
 * absent, written by something else, written for another offset, or malformed (then everything above the
 * committed offset is handled again: at-least-once holds).
 */
export function decodeFinished(metadata: string | null | undefined, offset: string): FinishedRun[] {
  const header = headerOf(offset);
  if (typeof metadata !== 'string' || !metadata.startsWith(header)) return [];
  const encoded = metadata.slice(header.length);
  if (!BASE64.test(encoded)) return [];
  const values: number[] = [];
  let value = 0;
  let scale = 1;
  for (const byte of Buffer.from(encoded, 'base64')) {
    value += (byte & 0x7f) * scale;
    // Past 2^53 (or a run of continuation bytes that makes the scale infinite, and the value NaN).
    if (!Number.isSafeInteger(value)) return [];
    if (byte & 0x80) {
      scale *= 0x80;
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
    if (to <= from || !Number.isSafeInteger(to) || (i === 0 && from < 1)) return [];
    runs.push({ from, to });
    end = to;
  }
  return runs;
}
