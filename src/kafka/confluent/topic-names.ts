/** Kafka's rule for a topic name (its `Topic.validate`): 1 to 249 ASCII letters, digits, `.`, `_` or `-`. */
const LEGAL = /^[a-zA-Z0-9._-]{1,249}$/;

/**
 * The first of `topics` that is neither a topic name Kafka accepts nor a pattern (`^` first), if any.
 * On the consumer group protocol the broker takes such a name and assigns nothing, and librdkafka
 * reports nothing; the other clients get the broker's refusal. The adapter refuses it itself.
 */
export function illegalTopicName(topics: readonly string[]): string | undefined {
  return topics.find((t) => !t.startsWith('^') && (!LEGAL.test(t) || t === '.' || t === '..'));
}
