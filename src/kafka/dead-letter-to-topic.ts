import type { FailureContext } from '../failure-policy';
import { textOf } from '../internal/text-of';
import { describe, integerOption, optionsObject } from '../validate';
import type { KafkaMessage } from './message';
import { headerList, type KafkaProducer, recordSender } from './record-sender';

/**
 * The headers `deadLetterToTopic` adds to a dead-lettered record, by what they say; every value is
 * UTF-8 text. The source and error headers are Kafka Connect's dead-letter-queue headers (KIP-298), so
 * tools that read a Connect dead-letter topic read these too; Connect has none for the attempts and the
 * original timestamp, so those two have names of this library's own.
 */
export const DEAD_LETTER_HEADERS = {
  /** The topic the record was read from. */
  topic: '__connect.errors.topic',
  /** Its partition there, in decimal. */
  partition: '__connect.errors.partition',
  /** Its offset there, in decimal. */
  offset: '__connect.errors.offset',
  /** The error's class: its `name` (`TypeError`), or its constructor's where `name` is the generic `Error`. */
  errorClass: '__connect.errors.exception.class.name',
  /** The error's message (for a thrown value that is no `Error`, its text), cut to `maxErrorLength`. */
  errorMessage: '__connect.errors.exception.message',
  /** The error's stack trace, cut to `maxErrorLength`; absent when it has none. */
  errorStack: '__connect.errors.exception.stacktrace',
  /** Attempts made at the record, the first one included, in decimal. */
  attempts: 'keyed-dispatch.attempts',
  /** The record's own timestamp (ms since the epoch, in decimal); the dead letter's is when it was sent. */
  originalTimestamp: 'keyed-dispatch.original-timestamp',
} as const;

/** Options of `deadLetterToTopic`. */
export interface DeadLetterToTopicOptions {
  /**
   * Most characters kept of the error's message, and of its stack trace, in the headers: longer text is
   * cut and ends with `…`, so one huge error cannot make the record too large for the topic. Integer
   * ≥ 1. Default 2,000.
   */
  maxErrorLength?: number;
}

/**
 * What `deadLetterToTopic` returns: a `deadLetter` for `retryPolicy` over Kafka messages, of any key
 * type (of its context it reads only the attempts).
 */
export type KafkaDeadLetter = (
  message: KafkaMessage,
  error: unknown,
  context: Pick<FailureContext<unknown>, 'attempts'>,
) => Promise<void>;

/**
 * A ready `deadLetter` for `retryPolicy`: it produces the failed record to `topic` with its original
 * key, value and headers, plus the `DEAD_LETTER_HEADERS` (where it came from, the error, the attempts,
 * its timestamp). It resolves once the broker acknowledged the record, so the failed record is settled
 * `dead-lettered`, and its offset committed, only after its copy is safe; a send that fails errors the
 * output with that error (in a `MessageError`), as a failing `deadLetter` does, and the record is not
 * committed. The producer is kafkajs's or @platformatic/kafka's (see `keyedProducer`); the record's key
 * picks its partition in `topic` as its producer's partitioner does. A header of the original record
 * with one of these names (a record dead-lettered before) is replaced.
 */
export function deadLetterToTopic(
  producer: KafkaProducer,
  topic: string,
  options: DeadLetterToTopicOptions = {},
): KafkaDeadLetter {
  optionsObject('deadLetterToTopic', options, ['maxErrorLength'] satisfies Array<
    keyof DeadLetterToTopicOptions
  >);
  if (typeof topic !== 'string' || topic.length === 0) {
    throw new TypeError(
      `deadLetterToTopic: expected \`topic\` to be a non-empty string, got ${describe(topic)}`,
    );
  }
  const maxErrorLength = integerOption(
    'deadLetterToTopic',
    'maxErrorLength',
    options.maxErrorLength,
    2000,
    1,
  );
  const send = recordSender('deadLetterToTopic', producer);
  const ours = new Set<string>(Object.values(DEAD_LETTER_HEADERS));
  return (message, error, context) => {
    const { errorClass, errorMessage, errorStack } = describeError(error);
    const added: Array<[string, string]> = [
      [DEAD_LETTER_HEADERS.topic, message.topic],
      [DEAD_LETTER_HEADERS.partition, String(message.partition)],
      [DEAD_LETTER_HEADERS.offset, message.offset],
      [DEAD_LETTER_HEADERS.errorClass, errorClass],
      [DEAD_LETTER_HEADERS.errorMessage, cut(errorMessage, maxErrorLength)],
      ...(errorStack === undefined
        ? []
        : [[DEAD_LETTER_HEADERS.errorStack, cut(errorStack, maxErrorLength)] as [string, string]]),
      [DEAD_LETTER_HEADERS.attempts, String(context.attempts)],
      [DEAD_LETTER_HEADERS.originalTimestamp, message.timestamp],
    ];
    const kept = headerList(message.headers).filter(([name]) => !ours.has(name));
    return send(topic, [{ key: message.key, value: message.value, headers: [...kept, ...added] }]);
  };
}

/** The class, message and stack of what a handler threw; never throws (a getter of the error may). */
function describeError(error: unknown): { errorClass: string; errorMessage: string; errorStack?: string } {
  // An error of another realm too: a thread's error is rebuilt in the realm that read its message, not
  // always the one this code runs in (a vm context, as under a test runner), where `instanceof` fails.
  if (!(error instanceof Error) && Object.prototype.toString.call(error) !== '[object Error]') {
    return { errorClass: error === null ? 'null' : typeof error, errorMessage: textOf(error) };
  }
  try {
    const { name: rawName, message, stack } = error as Error;
    const name = textOf(rawName);
    return {
      errorClass: name === 'Error' ? textOf((error as Error).constructor?.name ?? name) : name,
      errorMessage: textOf(message),
      ...(typeof stack === 'string' && { errorStack: stack }),
    };
  } catch {
    return { errorClass: 'Error', errorMessage: textOf(error) };
  }
}

/** `text` cut to `max` characters, the last being `…`; a surrogate pair is never split. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}
