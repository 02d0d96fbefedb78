import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { sleep } from '../support/waits';

export const BROKER = '127.0.0.1:9092';
const SCRIPT = join(__dirname, '..', '..', 'scripts', 'brokers', 'kafka.sh');

function answers(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: 9092 });
    socket.once('connect', () => {
      socket.end();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Starts the local single-node broker unless it already answers (a cold start fetches jars first). */
export async function ensureBroker(): Promise<void> {
  if (await answers()) return;
  await brokerScript('start');
}

/** Runs `kafka.sh <command>`: `stop` returns once the broker has exited, `start` once it answers again. */
export function brokerScript(command: 'start' | 'stop'): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    execFile(SCRIPT, [command], { timeout: 240_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`kafka.sh ${command} failed: ${err.message}\n${stdout}\n${stderr}`)) : resolve(),
    );
  });
}

/** Milliseconds a broker start may take in a `beforeAll`, cold (jar download) included. */
export const BROKER_START_MS = 240_000;

export function kafka(clientId: string): Kafka {
  return new Kafka({ clientId, brokers: [BROKER], logLevel: logLevel.NOTHING });
}

let counter = 0;
/** A fresh topic (and group) name per test: no state leaks between tests or runs. */
export function unique(prefix: string): string {
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter++}`;
}

/**
 * Creates `topic` (with `configs`, topic settings by name, where given) and returns once every partition has a leader. kafkajs's own wait for leaders gives up
 * when the broker, busy, still calls the topic unknown just after creating it; this one asks again.
 */
export async function createTopic(
  client: Kafka,
  topic: string,
  partitions: number,
  configs: Record<string, string> = {},
): Promise<void> {
  const admin = client.admin();
  await admin.connect();
  try {
    await admin.createTopics({
      topics: [
        {
          topic,
          numPartitions: partitions,
          replicationFactor: 1,
          configEntries: Object.entries(configs).map(([name, value]) => ({ name, value })),
        },
      ],
      waitForLeaders: false,
    });
    const led = await within(30_000, async () => {
      try {
        const [found] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics;
        return found.partitions.length === partitions && found.partitions.every((p) => p.leader >= 0);
      } catch (error) {
        if ((error as { retriable?: boolean }).retriable) return false;
        throw error;
      }
    });
    if (!led) throw new Error(`topic ${topic}: no leader for every partition within 30 s`);
  } finally {
    await admin.disconnect();
  }
}

/**
 * Waits up to `ms` for `condition`, checking every 10 ms; false when it never held, so the spec fails on
 * its assertion and still closes its consumers (a spec timeout would leave them open).
 */
export async function within(ms: number, condition: () => boolean | Promise<boolean>): Promise<boolean> {
  for (const until = Date.now() + ms; ; await sleep(10)) {
    if (await condition()) return true;
    if (Date.now() >= until) return false;
  }
}

/**
 * `request` again while it fails with an error the broker calls retriable (a coordinator still loading
 * its groups on a broker just started), for up to 10 s.
 */
async function retried<T>(request: () => Promise<T>): Promise<T> {
  for (const until = Date.now() + 10_000; ; ) {
    try {
      return await request();
    } catch (error) {
      if (!(error as { retriable?: boolean }).retriable || Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** Committed positions and end offsets of every partition of `topic`. */
export async function offsets(
  client: Kafka,
  groupId: string,
  topic: string,
): Promise<{ committed: Map<number, string>; end: Map<number, string> }> {
  const admin = client.admin();
  await admin.connect();
  try {
    const [group] = await retried(() => admin.fetchOffsets({ groupId, topics: [topic] }));
    const ends = await admin.fetchTopicOffsets(topic);
    return {
      committed: new Map(group.partitions.map((p) => [p.partition, p.offset])),
      end: new Map(ends.map((p) => [p.partition, p.high])),
    };
  } finally {
    await admin.disconnect();
  }
}

/**
 * How many members the group `groupId` has now, as the classic protocol's DescribeGroups tells (a group
 * of the consumer protocol reads as none).
 */
export async function groupMembers(client: Kafka, groupId: string): Promise<number> {
  const admin = client.admin();
  await admin.connect();
  try {
    const { groups } = await retried(() => admin.describeGroups([groupId]));
    return groups[0]?.members.length ?? 0;
  } finally {
    await admin.disconnect();
  }
}

/** Consumer settings that make rebalances quick on the local broker. */
export const QUICK_GROUP = {
  maxWaitTimeInMs: 100,
  sessionTimeout: 6000,
  heartbeatInterval: 500,
  rebalanceTimeout: 10000,
};
