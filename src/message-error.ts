import { errorTextOf, textOf } from './internal/text-of';

/**
 * The output's error when one message's own code failed — its key selector, its handler, or its dead
 * letter — for a message from a receiver that says where its messages come from (the Kafka, Redis and
 * NATS receivers do). It names the key and the source; `cause` is what was thrown. Errors of messages
 * from a plain source, or from a receiver that does not describe its messages, reach the output as
 * they were thrown, as with `mergeMap`.
 */
export class MessageError extends Error {
  /** The error's name, for logs and `instanceof`-free checks. */
  override name = 'MessageError';

  constructor(
    /** The message's key; undefined when its key selector failed. */
    readonly key: unknown,
    /** Where the message came from: `topic 'orders' partition 3 offset 1234`. */
    readonly source: string,
    /** What the key selector, the handler or the dead letter threw (or errored with). */
    override readonly cause: unknown,
  ) {
    super(
      `keyedDispatch: ${key === undefined ? 'the message' : `the message of key ${textOf(key)}`} of ${source} failed: ${errorTextOf(cause)}`,
      { cause },
    );
  }
}
