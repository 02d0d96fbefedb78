import { BROKER_START_MS, ensureBroker } from '../kafka/broker';
import { otherNode, runExample } from '../support/run-example';

const EXAMPLE_TIMEOUT = 180_000;

beforeAll(() => ensureBroker(), BROKER_START_MS);

it(
  'the Kafka example bills every event and exits by itself, and a second run (topic and group already there, another node first on PATH where the machine has one) prints nothing else either',
  async () => {
    // The second run as on a machine whose own `node` is another (a Node 20 has no Promise.withResolvers).
    const pathFirst = otherNode()?.bin;
    for (const run of [1, 2]) {
      const { code, stdout, stderr } = await runExample('kafka', {
        pathFirst: run === 2 ? pathFirst : undefined,
      });
      expect({ run, code, stderr }).toEqual({ run, code: 0, stderr: '' });
      expect(stdout).toMatch(/^billed 10000 events of 100 accounts in \d+ ms; offsets committed\n$/);
    }
  },
  EXAMPLE_TIMEOUT,
);
