import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe } from '../../validate';

/** The @platformatic/kafka releases the adapter is tested with (the package's peer dependency range). */
export const TESTED_CLIENT_RANGE = '~2.12.1';

/**
 * The consumer's internal hooks the adapter calls, which its public API does not offer: a protocol API
 * at the version negotiated with the broker (for the group requests the adapter sends itself), and the
 * options the consumer was created with.
 */
export interface ClientHooks {
  getApi: symbol;
  options: symbol;
}

type Kind = 'function' | 'object' | 'string';

/** The internal hooks, by the descriptions of their symbols. */
const HOOKS: Record<keyof ClientHooks, { description: string; kind: Kind }> = {
  getApi: { description: 'plt.kafka.base.getApi', kind: 'function' },
  options: { description: 'plt.kafka.base.options', kind: 'object' },
};

/** The public members of a `Consumer` the adapter uses, by path. */
const MEMBERS: ReadonlyArray<readonly [path: string, kind: Kind]> = [
  ['groupId', 'string'],
  ['topics.track', 'function'],
  ['topics.current', 'object'],
  ['connections.get', 'function'],
  ['connections.close', 'function'],
  ['metadata', 'function'],
  ['clearMetadata', 'function'],
  ['findGroupCoordinator', 'function'],
  ['fetch', 'function'],
  ['listOffsets', 'function'],
  ['joinGroup', 'function'],
  ['on', 'function'],
  ['off', 'function'],
  ['close', 'function'],
];

const kindOf = (value: unknown): string => (value === null ? 'null' : typeof value);
const article = (kind: Kind) => (kind === 'object' ? 'an' : 'a');

/**
 * Checks, once, that `consumer` is a @platformatic/kafka `Consumer` with everything the adapter calls,
 * and finds its internal hooks on the consumer itself rather than importing the client: the package
 * entry never loads @platformatic/kafka, and a second copy of the client (a bundler's, a loader's)
 * cannot mismatch them. Throws a `TypeError` naming the client's version and each missing piece.
 */
export function clientHooks(consumer: unknown, owner: string): ClientHooks {
  const symbols = new Map<string, symbol>();
  for (let o = consumer; o !== null && typeof o === 'object'; o = Object.getPrototypeOf(o)) {
    for (const symbol of Object.getOwnPropertySymbols(o)) {
      if (symbol.description !== undefined && !symbols.has(symbol.description))
        symbols.set(symbol.description, symbol);
    }
  }
  if (![...symbols.keys()].some((description) => description.startsWith('plt.kafka.'))) {
    throw new TypeError(
      `${owner}: expected \`consumer\` to be a @platformatic/kafka Consumer, got ${describe(consumer)}`,
    );
  }
  const client = consumer as Record<PropertyKey, unknown>;
  const missing: string[] = [];
  for (const { description, kind } of Object.values(HOOKS)) {
    const symbol = symbols.get(description);
    if (symbol === undefined || kindOf(client[symbol]) !== kind)
      missing.push(`the internal hook [${description}] (${article(kind)} ${kind})`);
  }
  for (const [path, kind] of MEMBERS) {
    const value = path
      .split('.')
      .reduce<unknown>((o, name) => (o as Record<string, unknown>)?.[name], client);
    if (kindOf(value) !== kind) missing.push(`${path} (${article(kind)} ${kind})`);
  }
  if (missing.length > 0) {
    const version = clientVersion() ?? '(version unknown)';
    throw new TypeError(
      `${owner}: \`consumer\` (@platformatic/kafka ${version}) lacks what the adapter uses: ${missing.join(', ')}; ` +
        `keyed-dispatch is tested with @platformatic/kafka ${TESTED_CLIENT_RANGE}`,
    );
  }
  return {
    getApi: symbols.get(HOOKS.getApi.description) as symbol,
    options: symbols.get(HOOKS.options.description) as symbol,
  };
}

/**
 * The version in the client's package.json, as this package resolves the client (a consumer made by
 * another copy of it would name that copy's); null where it cannot be read, e.g. in a bundle.
 */
function clientVersion(): string | null {
  let entry: string;
  try {
    entry = createRequire(__filename).resolve('@platformatic/kafka');
  } catch {
    return null;
  }
  for (let dir = dirname(entry); ; dir = dirname(dir)) {
    const manifest = readManifest(join(dir, 'package.json'));
    if (manifest?.name === '@platformatic/kafka')
      return typeof manifest.version === 'string' ? manifest.version : null;
    if (dirname(dir) === dir) return null;
  }
}

function readManifest(file: string): { name?: unknown; version?: unknown } | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}
