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
 * returns `undefined` when not even one fits, or there are none: a plain commit. Reads `runs` only as
 * far as it fits, so a lazy iterable costs what is written, not what it could yield.
 */
export function encodeFinished(
  runs: Iterable<FinishedRun>,
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
 * absent, longer than `maxBytes` (more than the reader would write itself), written by something else,
 * written for another offset, or malformed (then everything above the committed offset is handled again:
 * at-least-once holds). A trailing NUL is not part of it. Linear in the metadata's length.
 */
export function decodeFinished(
  metadata: string | null | undefined,
  offset: string,
  maxBytes = DEFAULT_METADATA_MAX_BYTES,
): FinishedRun[] {
  const header = headerOf(offset);
  if (typeof metadata !== 'string') return [];
  // librdkafka (@confluentinc/kafka-javascript) commits metadata with its C string's terminating NUL.
  if (metadata.endsWith('\0')) metadata = metadata.slice(0, -1);
  if (metadata.length > maxBytes || !metadata.startsWith(header)) return [];
  const encoded = metadata.slice(header.length);
  const bytes = Buffer.from(encoded, 'base64');
  // Base64 as `Buffer.toString` writes it, nothing else: `Buffer.from` would skip what is not.
  if (bytes.toString('base64') !== encoded) return [];
  const runs: FinishedRun[] = [];
  let end = 0;
  let gap = -1;
  let value = 0;
  let scale = 1;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    value += (byte & 0x7f) * scale;
    // Past 2^53 (or a run of continuation bytes that makes the scale infinite, and the value NaN).
    if (!Number.isSafeInteger(value)) return [];
    if (byte & 0x80) {
      scale *= 0x80;
      continue;
    }
    if (gap < 0) gap = value;
    else {
      const from = end + gap;
      const to = from + value;
      if (to <= from || !Number.isSafeInteger(to) || (runs.length === 0 && from < 1)) return [];
      runs.push({ from, to });
      end = to;
      gap = -1;
    }
    value = 0;
    scale = 1;
  }
  if (scale !== 1 || gap >= 0) return [];
  return runs;
}
