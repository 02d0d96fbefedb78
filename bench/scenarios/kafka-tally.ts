import { existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import type { KafkaBytes } from '../../src/kafka';

/** What a Kafka bench child prints on its last line. */
export interface KafkaRunResult {
  /** msgs/s from the first message this process handled to the last. */
  rate: number;
  violations: number;
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
 * Counts handled `key:seq` messages and checks per-key order. Done when every message has been handled
 * at least once, counting those already in the log (handled by a process killed before this one).
 */
export class Tally {
  private readonly next: Int32Array;
  private readonly seen = new Set<string>();
  private readonly fd: number | undefined;
  private handledHere = 0;
  private first = 0;
  private last = 0;
  violations = 0;
  private done!: () => void;
  readonly finished = new Promise<void>((resolve) => {
    this.done = resolve;
  });

  constructor(private readonly options: TallyOptions) {
    const { log, keys } = options;
    if (log !== undefined && existsSync(log)) {
      for (const line of readFileSync(log, 'utf8').split('\n')) if (line) this.seen.add(line);
    }
    this.fd = log === undefined ? undefined : openSync(log, 'a');
    // After a restart a key resumes wherever its partition was committed: its first seq sets the order.
    this.next = new Int32Array(keys).fill(this.seen.size === 0 ? 0 : -1);
  }

  record(value: KafkaBytes | string | null): void {
    const text = String(value);
    const colon = text.indexOf(':');
    const key = Number(text.slice(0, colon));
    const seq = Number(text.slice(colon + 1));
    const now = performance.now();
    if (this.handledHere++ === 0) this.first = now;
    this.last = now;
    if (this.next[key] >= 0 && this.next[key] !== seq) this.violations++;
    this.next[key] = seq + 1;
    if (this.fd !== undefined) writeSync(this.fd, `${text}\n`);
    if (this.handledHere === this.options.killPoint) console.log('kill-point');
    this.seen.add(text);
    if (this.seen.size === this.options.messages) this.done();
  }

  result(): KafkaRunResult {
    return { rate: (this.handledHere * 1000) / (this.last - this.first), violations: this.violations };
  }
}
