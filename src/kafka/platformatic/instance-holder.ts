import type { GroupCoordinator } from './coordinator';

interface ConsumerGroupDescribeResponse {
  groups: Array<{ members: Array<{ memberId: string; instanceId: string | null }> }>;
}

/**
 * The member id under which the consumer-protocol group `groupId` holds the group instance id
 * `instanceId` for a member other than `self`, or null when none does. After a crash the broker keeps
 * the instance id for the dead member until its session times out; knowing its member id lets the
 * member restarted under that instance id release it (as the classic protocol does on a rejoin).
 */
export async function instanceHolder(
  coordinator: GroupCoordinator,
  groupId: string,
  instanceId: string,
  self: string,
): Promise<string | null> {
  const response = await coordinator.call<ConsumerGroupDescribeResponse>(
    'ConsumerGroupDescribe',
    [groupId],
    false, // include authorized operations
  );
  const members = response.groups.flatMap((group) => group.members);
  return members.find((m) => m.instanceId === instanceId && m.memberId !== self)?.memberId ?? null;
}
