import { existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import type { KafkaBytes } from '../../src/kafka';

/** What a Kafka bench child prints on its last line. */
export interface KafkaRunResult {
  /** msgs/s from the first message this process handled to the last. */
  rate: number;
  violations: number;
  /**
   * Handlers running at once, on average, as each one starts (when the contender reports its starts):
   * what the in-flight bound leaves running once messages wait behind their key.
   */
  running?: number;
  /** Peak resident set size of the process, in bytes (Node contenders). */
  rss?: number;
  /** Peak V8 heap used, sampled every 100 ms, in bytes (Node contenders). */
  heap?: number;
  /** msgs/s of the process's first pass over the topic, when it warmed up first (`--warm-ups`): its cold rate. */
  cold?: number;
}

export interface TallyOptions {
  messages: number;
  keys: number;
  /** Appends each handled message to this file as `key:seq`, unbuffered so a SIGKILL loses none. */
  log?: string;
  /** Prints `kill-point` once this process has handled this many messages. */
  killPoint?: number;
}

/**
 * Counts handled `key:seq` messages and checks per-key order (of first handlings). Done when every message has been handled
 * at least once, counting those already in the log (handled by a process killed before this one).
 *
 * Kept cheap, as every contender pays it inside its measured stretch (and the sum-of-parts bound pays it
 * once in each of its parts): the value's digits are read from its bytes, and message `seq * keys + key`
 * is marked seen in a byte array, with no string made per message unless a log is written.
 */
export class Tally {
  private readonly next: Int32Array;
  /** 1 for each message handled at least once, at `seq * keys + key`. */
  private readonly seen: Uint8Array;
  private distinct = 0;
  private readonly fd: number | undefined;
  private handledHere = 0;
  private first = 0;
  private last = 0;
  /** Handlers started and not yet recorded, and their sum over every start. */
  private running = 0;
  private runningSum = 0;
  private starts = 0;
  violations = 0;
  private done!: () => void;
  readonly finished = new Promise<void>((resolve) => {
    this.done = resolve;
  });

  constructor(private readonly options: TallyOptions) {
    const { log, keys, messages } = options;
    this.seen = new Uint8Array(messages);
    if (log !== undefined && existsSync(log)) {
      for (const line of readFileSync(log, 'utf8').split('\n')) if (line) this.see(...parse(line));
    }
    this.fd = log === undefined ? undefined : openSync(log, 'a');
    // After a restart a key resumes wherever its partition was committed: its first seq sets the order.
    this.next = new Int32Array(keys).fill(this.distinct === 0 ? 0 : -1);
  }

  /** A handler starts (before its wait); `record` ends it. */
  started(): void {
    this.starts++;
    this.runningSum += ++this.running;
  }

  record(value: KafkaBytes | string | null): void {
    // Contenders that never report a start (no handler, or a batch) leave the count at 0.
    if (this.running > 0) this.running--;
    const [key, seq] = parse(value);
    const now = performance.now();
    if (this.handledHere++ === 0) this.first = now;
    this.last = now;
    // A message handled again (a replay from the committed offset after a rebalance) is a duplicate, not
    // disorder: the order checked is that of each message's first handling.
    if (this.next[key] >= 0 && this.next[key] !== seq && !this.handled(key, seq)) this.violations++;
    this.next[key] = seq + 1;
    if (this.fd !== undefined) writeSync(this.fd, `${key}:${seq}\n`);
    if (this.handledHere === this.options.killPoint) console.log('kill-point');
    this.see(key, seq);
    if (this.distinct === this.options.messages) this.done();
  }

  result(): KafkaRunResult {
    const rate = (this.handledHere * 1000) / (this.last - this.first);
    if (this.starts === 0) return { rate, violations: this.violations };
    return { rate, violations: this.violations, running: this.runningSum / this.starts };
  }

  private handled(key: number, seq: number): boolean {
    return this.seen[seq * this.options.keys + key] === 1;
  }

  private see(key: number, seq: number): void {
    const at = seq * this.options.keys + key;
    if (this.seen[at] === 0) {
      this.seen[at] = 1;
      this.distinct++;
    }
  }
}

/** The key and seq of a `key:seq` value, read digit by digit from its bytes (or characters). */
function parse(value: KafkaBytes | string | null): [number, number] {
  if (value === null) throw new Error('a bench message has no value');
  const text = typeof value === 'string';
  let key = 0;
  let seq = 0;
  let colon = false;
  for (let i = 0; i < value.length; i++) {
    const c = text ? value.charCodeAt(i) : value[i];
    if (c === 58) colon = true;
    else if (colon) seq = seq * 10 + c - 48;
    else key = key * 10 + c - 48;
  }
  return [key, seq];
}
