import { DispatchStats, HealthCheck, type HealthProblem } from 'keyed-dispatch';
import { ADAPTERS } from '../kafka/adapters';
import { BROKER, unique, within } from '../kafka/broker';
import { dispatchRecords, useEventTopics } from '../kafka/events';
import { LateProxy } from '../kafka/late-proxy';

jest.setTimeout(40_000);

const eventTopics = useEventTopics('health-readiness');
const RECORDS = 4;

describe.each(ADAPTERS)('HealthCheck of a Kafka consumer on $name', (kind) => {
  it('is not ready while its broker is unreachable (not joined, then failing past unreachableMs), ready once it joined, and not ready once closed; live all along', async () => {
    const topic = await eventTopics.topicWith(1, RECORDS, 2);
    const proxy = await LateProxy.reserve();
    const stats = new DispatchStats();
    const health = new HealthCheck({ orders: stats }, { unreachableMs: 300 });
    const problems = () => health.check().reasons.map((r) => r.problem);
    const handled = new Set<string>();
    const receiver = kind.receiver(
      unique('group'),
      [topic],
      { maxUnreachableMs: 30_000 },
      { broker: proxy.address, quickRetries: true },
    );
    const output = dispatchRecords(
      receiver,
      async (m) => {
        handled.add(m.offset);
      },
      { stats },
    );
    const seen = new Set<HealthProblem>();
    let alwaysLive = true;
    const watch = () => {
      const report = health.check();
      alwaysLive &&= report.live;
      for (const reason of report.reasons) seen.add(reason.problem);
      return report;
    };
    try {
      expect(problems()).toEqual(['receiver-not-ready']);
      expect(health.check().reasons[0]?.detail).toBe('the consumer has not joined its group yet');
      // Failing starts, each a fault: past unreachableMs the transport counts as unreachable.
      expect(await within(15_000, () => watch().reasons.some((r) => r.problem === 'unreachable'))).toBe(true);
      expect(health.check().reasons.find((r) => r.problem === 'unreachable')?.detail).toMatch(
        /the transport has been failing for \d+ ms, more than unreachableMs \(300 ms\); last failure \(connection\)/,
      );
      await proxy.open(BROKER);
      expect(await within(30_000, () => watch().ready && handled.size === RECORDS)).toBe(true);
      expect(seen).toEqual(new Set(['receiver-not-ready', 'unreachable']));
      expect(alwaysLive).toBe(true);
      await receiver.close();
      await output;
      expect(health.check()).toMatchObject({
        live: true,
        ready: false,
        reasons: [{ source: 'orders', problem: 'ended', detail: 'its source completed' }],
      });
    } finally {
      await receiver.close();
      await output;
      await proxy.close();
    }
  });
});
