/**
 * Shared counters and bounded waits for the lane specs. An Int32Array over a SharedArrayBuffer stays
 * shared when a message carrying it is cloned to a thread, so handlers on any kind of lane count into
 * the same memory the spec reads.
 */

/** `length` zeroed 32-bit counters that handlers on threads and the spec both see. */
export function sharedInts(length: number): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4 * length));
}

/** `promise`, or a rejection naming `what` if it has not settled within `ms`. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** How `promise` ended: its value, or the error it rejected with, wrapped so both can be inspected. */
export function outcomeOf<T>(promise: Promise<T>): Promise<{ value: T } | { error: unknown }> {
  return promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
}

/**
 * The counters of the `held` fixture handler: every message counts its start, then waits for one
 * release shared by all of them.
 */
export class HeldBoard {
  /** [0]: every start; [1 + n]: message n's starts. */
  readonly starts: Int32Array;
  readonly release = sharedInts(1);

  constructor(readonly messages: number) {
    this.starts = sharedInts(1 + messages);
  }

  /** Handlers started so far, over all messages. */
  get started(): number {
    return Atomics.load(this.starts, 0);
  }

  /** Starts of message `n`. */
  startsOf(n: number): number {
    return Atomics.load(this.starts, 1 + n);
  }

  /** Lets every waiting and future handler finish. */
  open(): void {
    Atomics.store(this.release, 0, 1);
    Atomics.notify(this.release, 0);
  }
}
