import type { JetStreamMessage } from './message';

/**
 * The messages a session holds — delivered and not yet settled: running, waiting in their key's mailbox,
 * or parked — kept in progress on the server (`working()`, a `+WPI`) every third of the consumer's
 * `ack_wait`. Otherwise the server redelivers a message that only waits behind its key once `ack_wait`
 * has passed, and the copy runs it a second time, after later messages of its key.
 */
export class HeldMessages {
  /** By stream sequence: a consumer reads one stream, and the server redelivers under the same sequence. */
  readonly #bySeq = new Map<number, JetStreamMessage>();
  #timer: ReturnType<typeof setInterval> | undefined = undefined;

  /** `onError`: a `working()` that threw (the connection is closed); it must not throw. */
  constructor(private readonly onError: (error: unknown) => void) {}

  /** Starts keeping the held messages in progress, every `everyMs`. */
  keepInProgress(everyMs: number): void {
    clearInterval(this.#timer);
    this.#timer = setInterval(() => this.#touchAll(), everyMs);
  }

  /** Whether a message of this sequence is held. */
  has(seq: number): boolean {
    return this.#bySeq.has(seq);
  }

  add(message: JetStreamMessage): void {
    this.#bySeq.set(message.seq, message);
  }

  /** It was settled, or given back unsettled: the server may redeliver it from now on. */
  delete(message: JetStreamMessage): void {
    if (this.#bySeq.get(message.seq) === message) this.#bySeq.delete(message.seq);
  }

  /** The session ended: what is still held comes back after `ack_wait`. */
  clear(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#bySeq.clear();
  }

  #touchAll(): void {
    try {
      for (const message of this.#bySeq.values()) message.msg.working();
    } catch (err) {
      this.onError(err);
    }
  }
}

/**
 * How often held messages are kept in progress, for a consumer's `ack_wait` in ms: a third of it, so a
 * late timer or a slow network still has two thirds of `ack_wait` to spare.
 */
export function inProgressEveryMs(ackWaitMs: number): number {
  return Math.max(1, Math.floor(ackWaitMs / 3));
}
