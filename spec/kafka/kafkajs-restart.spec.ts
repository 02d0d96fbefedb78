import { Socket } from 'node:net';
import { Kafka, logLevel } from 'kafkajs';
import { fromKafka } from 'keyed-dispatch/kafka';
import { BROKER, groupMembers, QUICK_GROUP, unique, within } from './broker';
import { dispatchRecords, useEventTopics } from './events';

jest.setTimeout(60_000);
const eventTopics = useEventTopics('kafkajs-restart');

/**
 * The network of one kafkajs client, as the spec makes it: connections refused, or made only after a
 * delay, and the open ones dropped at will. The broker itself keeps running for the other spec files.
 */
class Network {
  refusing = false;
  connectDelayMs = 0;
  private readonly sockets = new Set<Socket>();

  readonly socketFactory = ({
    host,
    port,
    onConnect,
  }: {
    host: string;
    port: number;
    onConnect: () => void;
  }) => {
    const socket = new Socket();
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    if (this.refusing) setImmediate(() => socket.destroy(new Error('connection refused by the spec')));
    else setTimeout(() => socket.connect({ host, port }, onConnect), this.connectDelayMs);
    return socket;
  };

  dropAll(): void {
    for (const socket of this.sockets) socket.destroy(new Error('connection dropped by the spec'));
  }
}

describe('a kafkajs receiver closed while kafkajs restarts its consumer after a crash', () => {
  it('waits for that restart, then leaves its group: no consumer is left fetching once close resolves', async () => {
    const topic = await eventTopics.topicWith(1, 20, 4);
    const groupId = unique('group');
    const network = new Network();
    const client = new Kafka({
      clientId: 'kafkajs-restart',
      brokers: [BROKER],
      logLevel: logLevel.NOTHING,
      socketFactory: network.socketFactory,
      connectionTimeout: 10_000,
      requestTimeout: 3_000,
      retry: { retries: 1, initialRetryTime: 100 },
    });
    const consumer = client.consumer({
      groupId,
      ...QUICK_GROUP,
      retry: { retries: 1, initialRetryTime: 100 },
    });
    const crashes: boolean[] = [];
    consumer.on(consumer.events.CRASH, (e) => crashes.push(e.payload.restart));
    let fetches = 0;
    consumer.on(consumer.events.FETCH_START, () => fetches++);
    const receiver = fromKafka({ consumer, admin: client.admin(), topics: [topic], fromBeginning: true });
    let handled = 0;
    const output = dispatchRecords(receiver, async () => {
      handled++;
    });
    try {
      expect(await within(20_000, () => handled === 20)).toBe(true);

      // The connections drop and none can be made: kafkajs crashes, and restarts the consumer itself.
      network.refusing = true;
      network.dropAll();
      expect(await within(20_000, () => crashes.includes(true))).toBe(true);

      // Its next restart connects, slowly: closed while that restart is under way.
      network.connectDelayMs = 2_000;
      network.refusing = false;
      await new Promise((resolve) => setTimeout(resolve, 500));
      await receiver.close();
      await output;
      const fetchesAtClose = fetches;

      // Once the crashed member's session has expired, the group is empty for good: nothing came back.
      const empty = () => groupMembers(eventTopics.client, groupId).then((members) => members === 0);
      expect(await within(20_000, empty)).toBe(true);
      expect({ fetchesAfterClose: fetches - fetchesAtClose, empty: await empty() }).toEqual({
        fetchesAfterClose: 0,
        empty: true,
      });
    } finally {
      await receiver.close();
      await consumer.disconnect().catch(() => undefined);
    }
  });
});
