import type { TopicPartition } from '../adapter';
import type { Consumer } from './client';
import type { Membership, MembershipEvents } from './membership';

const ignoreError = () => undefined;

interface JoinPayload {
  assignments?: Array<{ topic: string; partitions: number[] }>;
}

/**
 * Membership under the classic protocol, left to the client: it rebalances eagerly (every partition
 * is revoked when any member joins or leaves) and rejoins at once, so a revoke cannot hold it.
 *
 * A heartbeat that fails for another reason than the group (the broker gone) is reported; the client
 * heartbeats again by itself and rejoins once the group no longer knows it. When that rejoin fails, it
 * emits `error` and stops: the member then joins again itself, every `retryMs` until it is back,
 * reporting each failure.
 */
export class ClassicMember implements Membership {
  private readonly onJoin = (payload: JoinPayload) => {
    const partitions: TopicPartition[] = [];
    for (const { topic, partitions: list } of payload.assignments ?? []) {
      for (const partition of list) partitions.push({ topic, partition });
    }
    this.events.transportRecovered();
    this.events.assigned(partitions, 'all');
  };
  private readonly onRebalance = () => void this.events.revoking();
  private readonly onHeartbeat = () => this.events.transportRecovered();
  private readonly onHeartbeatError = (payload: { error: unknown }) =>
    this.events.transportFailed('heartbeat', payload.error);
  private readonly onError = (error: unknown) => {
    this.events.transportFailed('connection', error);
    this.rejoinLater();
  };
  private rejoinTimer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;

  constructor(
    private readonly consumer: Consumer,
    private readonly events: MembershipEvents,
    /** The pause before joining again after a failure, in ms. */
    private readonly retryMs: number,
  ) {}

  async start(): Promise<void> {
    this.consumer.on('consumer:group:join', this.onJoin);
    this.consumer.on('consumer:group:rebalance', this.onRebalance);
    this.consumer.on('consumer:heartbeat:end', this.onHeartbeat);
    this.consumer.on('consumer:heartbeat:error', this.onHeartbeatError);
    this.consumer.on('error', this.onError);
    await this.consumer.joinGroup({});
  }

  identity() {
    // No group instance id, as in the client's own commits: the broker checks member id and generation.
    return {
      memberId: this.consumer.memberId,
      generationIdOrMemberEpoch: this.consumer.generationId,
      instanceId: null,
    };
  }

  async leave(): Promise<void> {
    this.closed = true;
    clearTimeout(this.rejoinTimer);
    this.consumer.off('consumer:group:join', this.onJoin);
    this.consumer.off('consumer:group:rebalance', this.onRebalance);
    this.consumer.off('consumer:heartbeat:end', this.onHeartbeat);
    this.consumer.off('consumer:heartbeat:error', this.onHeartbeatError);
    // Closing the consumer leaves the group; an error it emits meanwhile has nobody left to tell.
    this.consumer.off('error', this.onError);
    // Once per consumer: a start that an outage failed leaves too, and is followed by another member.
    if (!this.consumer.listeners('error').includes(ignoreError)) this.consumer.on('error', ignoreError);
  }

  /** Joins again after `retryMs` (once, however many failures come meanwhile). */
  private rejoinLater(): void {
    if (this.closed || this.rejoinTimer !== undefined) return;
    this.rejoinTimer = setTimeout(() => {
      this.consumer.joinGroup({}).then(
        () => {
          this.rejoinTimer = undefined;
        },
        (error: unknown) => {
          this.rejoinTimer = undefined;
          if (this.closed) return;
          this.events.transportFailed('connection', error);
          this.rejoinLater();
        },
      );
    }, this.retryMs);
  }
}
