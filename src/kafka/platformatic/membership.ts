import type { KafkaConsumerListener, TopicPartition } from '../adapter';

/**
 * What a group membership reports to the adapter (the receiver's rebalance vocabulary), and the
 * failures it survives (`transportFailed`, `transportRecovered`: passed on to the receiver as they are).
 */
export interface MembershipEvents
  extends Pick<KafkaConsumerListener, 'transportFailed' | 'transportRecovered'> {
  /** Partitions were assigned: the whole assignment (`'all'`) or partitions added to it (`'added'`). */
  assigned(partitions: readonly TopicPartition[], mode: 'all' | 'added'): void;
  /** Partitions are being revoked (all when omitted); resolves once the receiver has let them go. */
  revoking(partitions?: readonly TopicPartition[]): Promise<void>;
  /** The membership failed and will not recover on its own. */
  failed(error: unknown): void;
}

/** A consumer's membership of its group under one rebalance protocol. */
export interface Membership {
  /** Joins the group; resolves once this consumer is a member. */
  start(): Promise<void>;
  /**
   * What an offset commit must carry to be accepted from this member: its id, its generation or epoch,
   * and the group instance id it joined with (null when it joined without one).
   */
  identity(): { memberId: string | null; generationIdOrMemberEpoch: number; instanceId: string | null };
  /** Leaves the group. */
  leave(): Promise<void>;
}
