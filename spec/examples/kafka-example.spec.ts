import { BROKER_START_MS, ensureBroker } from '../kafka/broker';
import { runExample } from '../support/run-example';

const EXAMPLE_TIMEOUT = 180_000;

beforeAll(() => ensureBroker(), BROKER_START_MS);

it(
  'the Kafka example bills every event and exits by itself, and a second run (topic and group already there) prints nothing else either',
  async () => {
    for (const run of [1, 2]) {
      const { code, stdout, stderr } = await runExample('kafka.ts');
      expect({ run, code, stderr }).toEqual({ run, code: 0, stderr: '' });
      expect(stdout).toMatch(/^billed 10000 events of 100 accounts in \d+ ms; offsets committed\n$/);
    }
  },
  EXAMPLE_TIMEOUT,
);
