import { describe } from '../validate';

/**
 * What a transport receiver does with a message settled as `failed` (its `onFailed` option), with the
 * same names on every transport:
 *
 * - `'redeliver'` (the default): leave it unacknowledged, so the transport delivers it again — Kafka
 *   commits stop below it until it comes again after a rebalance or restart, Redis leaves it pending to
 *   be claimed again, NATS naks it;
 * - `'ack'`: acknowledge it like a finished one, because the failure policy has dealt with it (retried
 *   it, dead-lettered it).
 *
 * A transport may add its own: NATS has `'term'` and `{ redeliverAfterMs }`.
 */
export type FailedAction = 'redeliver' | 'ack';

/**
 * Validates an `onFailed` name: one of `names` (the first is the default). `otherForm` describes a
 * non-string form the caller has already checked, for the error message.
 */
export function failedActionOption<A extends string>(
  owner: string,
  value: unknown,
  names: readonly [A, ...A[]],
  otherForm?: string,
): A {
  if (value === undefined) return names[0];
  const name = names.find((n) => n === value);
  if (name !== undefined) return name;
  const forms = names.map((n) => `'${n}'`);
  if (otherForm !== undefined) forms.push(otherForm);
  throw new TypeError(
    `${owner}: expected \`onFailed\` to be ${forms.slice(0, -1).join(', ')} or ${forms.at(-1)}, got ${describe(value)}`,
  );
}
