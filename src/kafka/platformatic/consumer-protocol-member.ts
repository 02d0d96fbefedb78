import { randomUUID } from 'node:crypto';
import type { TopicPartition } from '../adapter';
import { type Consumer, ErrorCodes, hasErrorCode } from './client';
import type { GroupCoordinator } from './coordinator';
import { instanceHolder } from './instance-holder';
import type { Membership, MembershipEvents } from './membership';

/** The heartbeat epoch with which a static member leaves for now, keeping its assignment (KIP-848). */
const LEAVE_FOR_NOW_EPOCH = -2;

interface HeartbeatResponse {
  memberId: string | null;
  memberEpoch: number;
  heartbeatIntervalMs: number;
  assignment: { topicPartitions: Array<{ topicId: string; partitions: number[] }> } | null;
}

interface OwnedPartition extends TopicPartition {
  topicId: string;
}

/**
 * Membership under the consumer rebalance protocol (KIP-848), heartbeating itself so that a revocation
 * is acknowledged only once the receiver has let the partitions go: until then the broker assigns them
 * to no one else (for up to the consumer's `rebalanceTimeout`), while every other partition keeps
 * flowing on both sides.
 */
export class ConsumerProtocolMember implements Membership {
  private memberId = '';
  private epoch = 0;
  /** The heartbeat API version spoken: from 1 on, the member chooses its own id. */
  private version = 0;
  /** Partitions this member holds, by `topic:partition`; heartbeats report them as owned. */
  private readonly owned = new Map<string, OwnedPartition>();
  /** Of `owned`, those being revoked (the receiver is draining them). */
  private readonly releasing = new Set<string>();
  private intervalMs = 1000;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private beating = false;
  /** Another heartbeat is due as soon as the one in flight returns (the assignment changed). */
  private again = false;
  private closed = false;
  private joined: { resolve(): void; reject(error: unknown): void } | null = null;
  /** Until when joining waits for the broker to release this member's instance id (see `heartbeat`). */
  private joinDeadline = 0;

  constructor(
    private readonly consumer: Consumer,
    private readonly coordinator: GroupCoordinator,
    private readonly topics: readonly string[],
    private readonly settings: { rebalanceTimeoutMs: number; instanceId: string | null },
    private readonly events: MembershipEvents,
  ) {}

  async start(): Promise<void> {
    this.version = await this.coordinator.version('ConsumerGroupHeartbeat');
    if (this.version >= 1) this.memberId = randomUUID();
    this.joinDeadline = Date.now() + this.settings.rebalanceTimeoutMs;
    await new Promise<void>((resolve, reject) => {
      this.joined = { resolve, reject };
      this.beat();
    });
  }

  identity() {
    return {
      memberId: this.memberId,
      generationIdOrMemberEpoch: this.epoch,
      instanceId: this.settings.instanceId,
    };
  }

  async leave(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    if (this.settings.instanceId !== null && this.memberId !== '' && this.epoch > 0) {
      await this.leaveForNow();
      return;
    }
    // Closing the consumer sends the leaving heartbeat (epoch -1) under the consumer's member id: it
    // leaves as this member instead of retrying a leave for one that never joined.
    this.consumer.memberId = this.memberId === '' ? null : this.memberId;
  }

  /**
   * A static member leaves for now (epoch -2): the broker keeps its partitions for it until its session
   * times out, so a restart under the same instance id gets them back and no other member takes them
   * meanwhile (a rolling restart moves nothing). Closing the consumer then sends its own leave (epoch
   * -1), which would end the membership: it goes out under an id the group does not know, and is refused.
   */
  private async leaveForNow(): Promise<void> {
    try {
      await this.heartbeatRequest(LEAVE_FOR_NOW_EPOCH, this.ownedByTopicId());
    } catch {
      // Not heard: the member stays until its session times out, as after a crash.
    }
    this.consumer.memberId = randomUUID();
  }

  /** Sends a heartbeat now, or right after the one in flight. */
  private beat(): void {
    if (this.closed) return;
    if (this.beating) {
      this.again = true;
      return;
    }
    this.beating = true;
    clearTimeout(this.timer);
    void this.heartbeat().finally(() => {
      this.beating = false;
      if (this.closed) return;
      if (this.again) {
        this.again = false;
        this.beat();
        return;
      }
      this.timer = setTimeout(() => this.beat(), this.intervalMs);
      this.timer.unref?.();
    });
  }

  private async heartbeat(): Promise<void> {
    try {
      const response = await this.heartbeatRequest(this.epoch, this.ownedByTopicId());
      if (this.closed) return;
      if (response.memberId) this.memberId = response.memberId;
      this.epoch = response.memberEpoch;
      if (response.heartbeatIntervalMs > 0) this.intervalMs = response.heartbeatIntervalMs;
      this.joined?.resolve();
      this.joined = null;
      this.events.transportRecovered();
      if (response.assignment !== null) await this.reconcile(response.assignment.topicPartitions);
    } catch (error) {
      if (this.closed) return;
      // A static member restarted after a crash: the broker keeps its instance id for the dead member
      // until that one's session times out. It is taken over at once; should that fail, joining is tried
      // again each heartbeat interval, for up to the rebalance timeout.
      const unreleased = hasErrorCode(error, ErrorCodes.UNRELEASED_INSTANCE_ID);
      if (this.joined !== null && unreleased && Date.now() < this.joinDeadline) {
        await this.takeOverInstanceId();
        return;
      }
      if (this.joined !== null) {
        this.closed = true;
        this.joined.reject(error);
        return;
      }
      // Another member took this one's instance id over (it was restarted while this one still ran):
      // this one is no longer in the group, as under the classic protocol.
      if (hasErrorCode(error, ErrorCodes.FENCED_INSTANCE_ID)) {
        this.closed = true;
        this.events.failed(error);
        return;
      }
      // Fenced or forgotten (e.g. it missed its session timeout): its partitions are someone else's
      // already. It rejoins at epoch 0; other errors are retried at the next heartbeat.
      this.events.transportFailed('heartbeat', error);
      if (
        hasErrorCode(error, ErrorCodes.FENCED_MEMBER_EPOCH) ||
        hasErrorCode(error, ErrorCodes.UNKNOWN_MEMBER_ID)
      ) {
        this.lose();
      }
    }
  }

  /**
   * Releases this member's instance id from the member that holds it, a crashed earlier run of this
   * one: a heartbeat under that member's id leaves for now (epoch -2), as a graceful close would have,
   * so the next join under the instance id replaces it and gets its assignment back at once, instead of
   * after its session timeout. A holder still running is fenced at its next heartbeat.
   */
  private async takeOverInstanceId(): Promise<void> {
    const instanceId = this.settings.instanceId;
    if (instanceId === null) return;
    try {
      const holder = await instanceHolder(this.coordinator, this.consumer.groupId, instanceId, this.memberId);
      if (holder === null || this.closed) return;
      await this.heartbeatRequest(LEAVE_FOR_NOW_EPOCH, [], holder);
      this.again = true;
    } catch {
      // Not released: joining is tried again at the next heartbeat.
    }
  }

  private heartbeatRequest(
    epoch: number,
    owned: Array<{ topicId: string; partitions: number[] }>,
    memberId = this.memberId,
  ): Promise<HeartbeatResponse> {
    return this.coordinator.call<HeartbeatResponse>(
      'ConsumerGroupHeartbeat',
      this.consumer.groupId,
      memberId,
      epoch,
      this.settings.instanceId,
      null, // rack
      this.settings.rebalanceTimeoutMs,
      [...this.topics],
      null, // topic pattern (sent from version 1 on; the client takes the argument at every version)
      null, // server-side assignor: the broker's default
      owned,
    );
  }

  /** Takes the partitions added to the target assignment at once; lets the removed ones go once drained. */
  private async reconcile(target: Array<{ topicId: string; partitions: number[] }>): Promise<void> {
    const names = await this.topicNames(target.map((t) => t.topicId));
    const wanted = new Map<string, OwnedPartition>();
    for (const { topicId, partitions } of target) {
      const topic = names.get(topicId);
      if (topic === undefined) continue;
      for (const partition of partitions) wanted.set(`${topic}:${partition}`, { topic, partition, topicId });
    }
    if (this.closed) return;
    const added = [...wanted].filter(([id]) => !this.owned.has(id));
    for (const [id, partition] of added) this.owned.set(id, partition);
    if (added.length > 0) {
      this.events.assigned(
        added.map(([, { topic, partition }]) => ({ topic, partition })),
        'added',
      );
      this.again = true;
    }
    const revoked = [...this.owned].filter(([id]) => !wanted.has(id) && !this.releasing.has(id));
    if (revoked.length === 0) return;
    for (const [id] of revoked) this.releasing.add(id);
    void this.events.revoking(revoked.map(([, { topic, partition }]) => ({ topic, partition }))).then(() => {
      // Acknowledged by the next heartbeat, which no longer reports them as owned.
      for (const [id] of revoked) if (this.releasing.delete(id)) this.owned.delete(id);
      this.beat();
    });
  }

  /** Every owned partition is gone without a revocation: tells the receiver, rejoins at epoch 0. */
  private lose(): void {
    this.epoch = 0;
    const lost = [...this.owned.values()].map(({ topic, partition }) => ({ topic, partition }));
    this.owned.clear();
    this.releasing.clear();
    if (lost.length > 0) void this.events.revoking(lost);
    this.again = true;
  }

  private ownedByTopicId(): Array<{ topicId: string; partitions: number[] }> {
    const byTopic = new Map<string, number[]>();
    for (const { topicId, partition } of this.owned.values()) {
      const list = byTopic.get(topicId);
      if (list === undefined) byTopic.set(topicId, [partition]);
      else list.push(partition);
    }
    return [...byTopic].map(([topicId, partitions]) => ({ topicId, partitions }));
  }

  /** Topic names by id (assignments name topics by id); refreshes the metadata for an unknown id. */
  private async topicNames(ids: readonly string[]): Promise<Map<string, string>> {
    const read = async (forceUpdate: boolean) => {
      const metadata = await this.consumer.metadata({ topics: [...this.topics], forceUpdate });
      return new Map([...metadata.topics].map(([name, topic]) => [topic.id, name]));
    };
    const names = await read(false);
    return ids.every((id) => names.has(id)) ? names : read(true);
  }
}
