import { DispatchRuntime, DispatchStats, dispatchComponent, keyedDispatch } from 'keyed-dispatch';
import { type KafkaMessage, kafkaKey } from 'keyed-dispatch/kafka';
import { lastValueFrom } from 'rxjs';
import { ADAPTERS } from './adapters';
import { offsets, unique, within } from './broker';
import { useEventTopics } from './events';

jest.setTimeout(90_000);

const eventTopics = useEventTopics('graceful-stop');

const WINDOW = 32;
const HANDLER_MS = 300;

describe.each(ADAPTERS)('A graceful runtime stop over $name with a real broker', (kind) => {
  it('runs every admitted message, commits while it drains, and none of them is delivered again after a restart', async () => {
    // Four keys on one partition: of the 32 admitted, 4 run at a time and 28 queue behind them.
    const topic = await eventTopics.topicWith(1, 200, 4);
    const groupId = unique('group');
    const stats = new DispatchStats();
    const finished: number[] = [];
    const runtime = new DispatchRuntime({
      components: [
        dispatchComponent({
          name: 'orders',
          source: kind.receiver(groupId, [topic], { commitIntervalMs: 200 }),
          dispatch: {
            key: kafkaKey,
            maxInFlight: WINDOW,
            stats,
            handle: async (m: KafkaMessage) => {
              await new Promise((resolve) => setTimeout(resolve, HANDLER_MS));
              finished.push(Number(m.offset));
            },
          },
        }),
      ],
    }).start();
    const full = await within(20_000, () => stats.snapshot().inFlight === WINDOW);

    const committedNow = async () =>
      Number((await offsets(eventTopics.client, groupId, topic)).committed.get(0) ?? -1);
    const atStop = await committedNow();
    const stopping = runtime.stopGracefully({ drain: 'all', timeoutMs: 30_000 });
    // Commits go on while the drain runs: seen before its last handlers finish.
    let committedWhileDraining = atStop;
    await within(20_000, async () => {
      committedWhileDraining = Math.max(committedWhileDraining, await committedNow());
      return finished.length >= WINDOW - 4;
    });
    const report = await stopping;
    expect(full).toBe(true);
    expect(report.outcome).toBe('drained');
    expect(report.components[0].leftForRedelivery).toEqual([]);
    const { admitted, settled } = stats.snapshot();
    expect(settled).toBe(admitted);
    expect(finished.length).toBe(admitted);
    expect(committedWhileDraining).toBeGreaterThan(atStop);
    expect(await committedNow()).toBe(admitted);

    // A new member after it: the records it takes in up to a marker produced now are those never taken.
    const receiver = kind.receiver(groupId, [topic]);
    const again: number[] = [];
    const output = lastValueFrom(
      receiver.pipe(
        keyedDispatch<KafkaMessage, string, void>({
          key: (m) => {
            again.push(Number(m.offset));
            return kafkaKey(m);
          },
          handle: async () => {},
        }),
      ),
      { defaultValue: undefined },
    );
    await eventTopics.producer.send({ topic, messages: [{ key: 'marker', value: 'marker', partition: 0 }] });
    await within(20_000, () => again.includes(200));
    await receiver.close();
    await output;
    expect(again.filter((offset) => finished.includes(offset))).toEqual([]);
    expect(again[0]).toBe(admitted);
  });
});
