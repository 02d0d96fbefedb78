import { errorTextOf } from '../internal/text-of';

/** Why a thread died, as best known: the error it raised, or its exit code. */
function cause(exitCode: number, error: unknown): string {
  return error instanceof Error ? errorTextOf(error) : `exit code ${exitCode}`;
}

/**
 * A thread lane died and was not allowed to respawn at once: its thread had already been replaced
 * `maxRespawnsPerMinute` times within a minute. Every message the dead thread held fails with this error.
 */
export class ThreadCrashLoopError extends Error {
  /** The error's name, for logs and `instanceof`-free checks. */
  override name = 'ThreadCrashLoopError';
  constructor(
    /** Index of the thread lane whose thread died. */
    readonly threadIndex: number,
    exitCode: number,
    error: unknown,
    maxRespawnsPerMinute: number,
  ) {
    super(
      `thread lane ${threadIndex} died (${cause(exitCode, error)}) after ${maxRespawnsPerMinute} respawns within a minute ` +
        '(`maxRespawnsPerMinute`); the messages it held are not run again',
      { cause: error },
    );
  }
}

/**
 * A thread lane died holding a message whose buffers were transferred to it (`threadHandler`'s
 * `transfer` option): the main thread no longer has the data, so the message cannot run again.
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
      `thread lane ${threadIndex} died (${cause(exitCode, error)}) holding a message whose buffers were transferred to it; ` +
        'it cannot run again',
      { cause: error },
    );
  }
}

/** Every thread lane of the executor is down (respawn rate limit) when a new key needs one. */
export class NoThreadLaneError extends Error {
  /** The error's name, for logs and `instanceof`-free checks. */
  override name = 'NoThreadLaneError';
  constructor() {
    super(
      'every thread lane is down after repeated crashes (`maxRespawnsPerMinute`); no lane can take a new key',
    );
  }
}
