/**
 * How far one consumer is behind one source of its receiver's messages — a Kafka partition, a Redis
 * stream read by a group, a JetStream consumer — in `DispatchSnapshot.transportLag`. Figures are
 * counts of messages; a transport that is asked at an interval answers with figures as old as `at`.
 */
export interface TransportLag {
  /** The transport: `'kafka'`, `'redis'`, `'jetstream'` (a receiver of your own names its own). */
  readonly transport: string;
  /** Where the messages are stored: the Kafka topic, the Redis stream, the JetStream stream. */
  readonly source: string;
  /** The Kafka partition's number; null for transports without partitions. */
  readonly partition: number | null;
  /**
   * Who reads it, where the transport keeps that apart from the receiver: the Redis consumer group, the
   * JetStream consumer's name; null for Kafka (a receiver is one member of one group).
   */
  readonly consumer: string | null;
  /**
   * Messages stored there that this consumer has not finished, in messages: Kafka the partition's high
   * watermark (as of its latest fetch that brought records) less the first unfinished offset; Redis the
   * group's `lag` (entries not delivered yet) plus its pending entries (delivered, not acknowledged);
   * JetStream the consumer's `num_pending` plus `num_ack_pending`.
   */
  readonly lag: number;
  /**
   * Where the transport records the consumer's progress, as it writes it: Kafka the offset this member
   * last committed (the next one to consume), Redis the group's last delivered entry id, JetStream the
   * stream sequence of the consumer's acknowledgement floor; null while there is none.
   */
  readonly committed: string | null;
  /** When the transport's figures were read (ms since the epoch): `lag` is as old as this. */
  readonly at: number;
}
