import { errorTextOf, textOf } from '../internal/text-of';

/** Why a thread died, as best known: the error it raised, or its exit code. */
function cause(exitCode: number, error: unknown): string {
  return error instanceof Error ? errorTextOf(error) : `exit code ${exitCode}`;
}

/**
 * The verdict on a message that keeps crashing its thread: it was running when its thread lane died,
 * and again when it ran alone on the replacement (or when it had crashed a thread before; or it was the
 * only message running, and the data it transferred there went down with the thread, so it cannot run
 * alone to clear itself). That run fails with this error, which reaches the message's failure policy
 * like a handler's error; the other messages the thread held run again, and none of them fails for it.
 */
export class ThreadCrashLoopError extends Error {
  /** The error's name, for logs and `instanceof`-free checks. */
  override name = 'ThreadCrashLoopError';
  constructor(
    /** Index of the thread lane whose thread died. */
    readonly threadIndex: number,
    exitCode: number,
    error: unknown,
    /** The key of the message that crashed it. */
    readonly key: unknown,
    /** It was the only message running, and its transferred data went down with the thread. */
    dataLost = false,
  ) {
    super(
      `the message of key ${textOf(key)} ` +
        (dataLost
          ? `was the only message running when thread lane ${threadIndex} went down (${cause(exitCode, error)}), and the data it transferred there went with it, so it cannot run again`
          : `took thread lane ${threadIndex} down (${cause(exitCode, error)}) each time it ran, once running alone`) +
        ': it is blamed for the crash, and the other messages its thread held run again',
      { cause: error },
    );
  }
}

/**
 * A thread handler held its thread past `maxBlockingMs` (a loop that never returns, a run far longer
 * than its bound): its thread was terminated and replaced, and this error fails that message, to its
 * failure policy like a handler's error. The other messages the thread held run again.
 */
export class ThreadBlockedError extends Error {
  /** The error's name, for logs and `instanceof`-free checks. */
  override name = 'ThreadBlockedError';
  constructor(
    /** Index of the thread lane whose thread was terminated. */
    readonly threadIndex: number,
    /** The bound it ran past: the `ThreadExecutor` option `maxBlockingMs`. */
    readonly maxBlockingMs: number,
    /** The key of the message whose handler held the thread. */
    readonly key: unknown,
  ) {
    super(
      `the handler of the message of key ${textOf(key)} held thread lane ${threadIndex} past ` +
        `\`maxBlockingMs\` (${maxBlockingMs} ms) without returning: its thread was terminated and replaced, ` +
        'and the other messages it held run again',
    );
  }
}

/**
 * A thread lane died while running a message whose buffers were transferred to it (`threadHandler`'s
 * `transfer` option), beside other running messages: the main thread no longer has the data, so the
 * message cannot run again, nor run alone to show whether it crashed the thread. (A message that was
 * only waiting there keeps its data: it moves when the thread starts the message.)
 */
export class ThreadExitedError extends Error {
  /** The error's name, for logs and `instanceof`-free checks. */
  override name = 'ThreadExitedError';
  constructor(
    /** Index of the thread lane whose thread died. */
    readonly threadIndex: number,
    exitCode: number,
    error: unknown,
  ) {
    super(
      `thread lane ${threadIndex} died (${cause(exitCode, error)}) running a message whose buffers were transferred to it; ` +
        'it cannot run again',
      { cause: error },
    );
  }
}

/**
 * Every thread lane of the executor is down (respawn rate limit) when a new key needs one.
 * @deprecated No longer thrown: a new key waits for the next thread of a lane that is down.
 */
export class NoThreadLaneError extends Error {
  /** The error's name, for logs and `instanceof`-free checks. */
  override name = 'NoThreadLaneError';
  constructor() {
    super(
      'every thread lane is down after repeated crashes (`maxRespawnsPerMinute`); no lane can take a new key',
    );
  }
}
