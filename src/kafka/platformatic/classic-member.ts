import type { TopicPartition } from '../adapter';
import type { Consumer } from './client';
import type { Membership, MembershipEvents } from './membership';

interface JoinPayload {
  assignments?: Array<{ topic: string; partitions: number[] }>;
}

/**
 * Membership under the classic protocol, left to the client: it rebalances eagerly (every partition
 * is revoked when any member joins or leaves) and rejoins at once, so a revoke cannot hold it.
 */
export class ClassicMember implements Membership {
  private readonly onJoin = (payload: JoinPayload) => {
    const partitions: TopicPartition[] = [];
    for (const { topic, partitions: list } of payload.assignments ?? []) {
      for (const partition of list) partitions.push({ topic, partition });
    }
    this.events.assigned(partitions, 'all');
  };
  private readonly onRebalance = () => void this.events.revoking();

  constructor(
    private readonly consumer: Consumer,
    private readonly events: MembershipEvents,
  ) {}

  async start(): Promise<void> {
    this.consumer.on('consumer:group:join', this.onJoin);
    this.consumer.on('consumer:group:rebalance', this.onRebalance);
    await this.consumer.joinGroup({});
  }

  identity() {
    // The client joins classic groups without a group instance id, whatever its options say: a commit
    // naming one would be refused.
    return {
      memberId: this.consumer.memberId,
      generationIdOrMemberEpoch: this.consumer.generationId,
      instanceId: null,
    };
  }

  async leave(): Promise<void> {
    this.consumer.off('consumer:group:join', this.onJoin);
    this.consumer.off('consumer:group:rebalance', this.onRebalance);
    // Closing the consumer leaves the group.
  }
}
