import { fork } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Consumer } from '@platformatic/kafka';
import { keyedDispatch } from 'keyed-dispatch';
import { fromPlatformaticKafka, type KafkaMessage, kafkaKey } from 'keyed-dispatch/kafka';
import { lastValueFrom } from 'rxjs';
import { BROKER, offsets, QUICK_GROUP, unique } from './broker';
import { useEventTopics } from './events';
import { buildMemberScript } from './member-script';

jest.setTimeout(90_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const eventTopics = useEventTopics('static');

/**
 * A @platformatic/kafka consumer of `groupId` with a group instance id (static membership). Its option
 * types (1.22) do not list `groupInstanceId`; the adapter reads it from the options all the same.
 */
function staticConsumer(groupId: string, instanceId: string, protocol: 'consumer' | 'classic'): Consumer {
  const timing =
    protocol === 'consumer'
      ? { groupProtocol: 'consumer' as const, rebalanceTimeout: 60_000 }
      : {
          sessionTimeout: QUICK_GROUP.sessionTimeout,
          heartbeatInterval: QUICK_GROUP.heartbeatInterval,
          rebalanceTimeout: QUICK_GROUP.rebalanceTimeout,
        };
  const options = { clientId: 'static-spec', bootstrapBrokers: [BROKER], groupId, ...timing };
  return new Consumer(Object.assign(options, { groupInstanceId: instanceId }));
}

describe.each(['consumer', 'classic'] as const)(
  '@platformatic/kafka with a group instance id, %s protocol',
  (protocol) => {
    it('commits what it handled: the broker accepts its commits', async () => {
      const topic = await eventTopics.topicWith(2, 100, 10);
      const groupId = unique('group');
      const receiver = fromPlatformaticKafka({
        consumer: staticConsumer(groupId, unique('instance'), protocol),
        topics: [topic],
        fromBeginning: true,
        maxWaitMs: 100,
        commitIntervalMs: 100,
      });
      let handled = 0;
      const output = lastValueFrom(
        receiver.pipe(
          keyedDispatch<KafkaMessage, string, void>({
            key: kafkaKey,
            handle: async () => {
              handled++;
            },
          }),
        ),
        { defaultValue: undefined },
      );
      try {
        const { end } = await offsets(eventTopics.client, groupId, topic);
        // Committed while it runs (every 100 ms), not only by close().
        let committed = new Map<number, string>();
        for (const until = Date.now() + 20_000; Date.now() < until; ) {
          committed = (await offsets(eventTopics.client, groupId, topic)).committed;
          if (handled === 100 && [...end].every(([p, o]) => committed.get(p) === o)) break;
          await sleep(100);
        }
        expect(committed).toEqual(end);
      } finally {
        await receiver.close();
        await output;
      }
    });
  },
);

describe('@platformatic/kafka with a group instance id, consumer protocol, after a crash', () => {
  const OUT = join(__dirname, '..', '..', '.build', 'kafka-static');
  let memberScript = '';
  beforeAll(() => {
    memberScript = buildMemberScript(OUT);
  });

  /** A member process of `groupId` with the group instance id `instanceId`, recording what it handles. */
  function member(groupId: string, topic: string, instanceId: string, file: string) {
    const child = fork(memberScript, ['platformatic', groupId, topic, file, '5', '16', instanceId], {
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    const state = { handled: 0, exited: null as number | null, stderr: '' };
    child.on('message', (m: { handled?: number }) => {
      if (m.handled !== undefined) state.handled = m.handled;
    });
    child.stderr?.on('data', (chunk) => {
      state.stderr += chunk;
    });
    child.on('exit', (code) => {
      state.exited = code ?? -1;
    });
    return { child, state };
  }

  const handledIn = (files: string[]) =>
    new Set(
      files
        .flatMap((f) => (existsSync(f) ? readFileSync(f, 'utf8').split('\n').filter(Boolean) : []))
        .map((l) => l.split(' ').slice(0, 2).join(' ')),
    );

  it('a member restarted under the same instance id waits until the broker lets the crashed one go, then carries on', async () => {
    const topic = await eventTopics.topicWith(2, 2000, 20);
    const groupId = unique('group');
    const instanceId = unique('instance');
    const files = [join(OUT, `${groupId}-0.log`), join(OUT, `${groupId}-1.log`)];
    const first = member(groupId, topic, instanceId, files[0]);
    while (first.state.handled < 200 && first.state.exited === null) await sleep(20);
    first.child.kill('SIGKILL');
    // The broker holds the instance id for the crashed member until its session times out.
    const second = member(groupId, topic, instanceId, files[1]);
    try {
      const until = Date.now() + 60_000;
      while (handledIn(files).size < 2000 && second.state.exited === null && Date.now() < until)
        await sleep(100);
      expect([second.state.exited, second.state.stderr.slice(0, 500)]).toEqual([null, '']);
      expect(handledIn(files).size).toBe(2000);
    } finally {
      if (second.state.exited === null) {
        second.child.send('close');
        await new Promise((resolve) => second.child.once('exit', resolve));
      }
    }
  });
});
