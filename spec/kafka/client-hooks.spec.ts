import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Consumer, Producer } from '@platformatic/kafka';
import { fromPlatformaticKafka, platformaticAdapter } from 'keyed-dispatch/kafka';
import { platformaticConsumer } from './adapters';
import { BROKER } from './broker';

const manifest = (file: string) => JSON.parse(readFileSync(file, 'utf8'));
const ROOT = join(__dirname, '..', '..');
const installed: string = manifest(
  join(ROOT, 'node_modules', '@platformatic', 'kafka', 'package.json'),
).version;
const peerRange: string = manifest(join(ROOT, 'package.json')).peerDependencies['@platformatic/kafka'];

/** The symbol of one of the client's internal hooks, found on the consumer's prototype chain. */
function hook(consumer: object, description: string): symbol {
  for (let o = consumer; o !== null; o = Object.getPrototypeOf(o)) {
    const found = Object.getOwnPropertySymbols(o).find((s) => s.description === description);
    if (found !== undefined) return found;
  }
  throw new Error(`no ${description} on the consumer`);
}

/** A real consumer with one of its members replaced by `undefined`, as a client release without it. */
function without(key: PropertyKey): Consumer {
  const consumer = platformaticConsumer('unused');
  Object.defineProperty(consumer, key, { value: undefined });
  return consumer;
}

describe('The @platformatic/kafka adapter checks the client when the receiver is created', () => {
  it('refuses a consumer whose internal API lookup is gone, naming the client version and that hook alone', () => {
    const consumer = platformaticConsumer('unused');
    const broken = without(hook(consumer, 'plt.kafka.base.getApi'));
    expect(() => fromPlatformaticKafka({ consumer: broken, topics: ['t'] })).toThrow(
      new TypeError(
        `platformaticAdapter: \`consumer\` (@platformatic/kafka ${installed}) lacks what the adapter uses: ` +
          'the internal hook [plt.kafka.base.getApi] (a function); ' +
          `keyed-dispatch is tested with @platformatic/kafka ${peerRange}`,
      ),
    );
  });

  it('refuses a consumer without its options hook or its public connection pool (which 1.x has not)', () => {
    const consumer = platformaticConsumer('unused');
    expect(() =>
      platformaticAdapter(without(hook(consumer, 'plt.kafka.base.options')), { topics: ['t'] }),
    ).toThrow('lacks what the adapter uses: the internal hook [plt.kafka.base.options] (an object); ');
    expect(() => platformaticAdapter(without('connections'), { topics: ['t'] })).toThrow(
      'lacks what the adapter uses: connections.get (a function), connections.close (a function); ',
    );
  });

  it('refuses another kind of client, naming each Consumer member it lacks', async () => {
    const producer = new Producer({ clientId: 'hooks-spec', bootstrapBrokers: [BROKER] });
    try {
      const refusal = (() => {
        try {
          platformaticAdapter(producer as never, { topics: ['t'] });
        } catch (error) {
          return (error as Error).message;
        }
        return 'accepted';
      })();
      expect(refusal).toContain(
        `\`consumer\` (@platformatic/kafka ${installed}) lacks what the adapter uses: `,
      );
      for (const member of ['groupId (a string)', 'topics.track (a function)', 'fetch (a function)'])
        expect(refusal).toContain(member);
      // What a producer has is not named.
      expect(refusal).not.toContain('metadata');
      expect(refusal).not.toContain('internal hook');
    } finally {
      await producer.close();
    }
  });

  it('refuses what is no @platformatic/kafka client at all, and accepts an intact consumer', () => {
    expect(() => platformaticAdapter({ groupId: 'g' } as never, { topics: ['t'] })).toThrow(
      new TypeError(
        'platformaticAdapter: expected `consumer` to be a @platformatic/kafka Consumer, got an object (object)',
      ),
    );
    expect(() => platformaticAdapter(platformaticConsumer('unused'), { topics: ['t'] })).not.toThrow();
  });
});
