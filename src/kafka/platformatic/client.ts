import type * as Platformatic from '@platformatic/kafka';

export type Consumer = Platformatic.Consumer;
export type Connection = Platformatic.Connection;

/**
 * The consumer's internal hooks the adapter calls: its negotiated API versions, its connections (with
 * their TLS and SASL settings) and its options.
 */
export interface ClientHooks {
  getApi: symbol;
  getConnection: symbol;
  options: symbol;
}

const HOOKS: Record<keyof ClientHooks, string> = {
  getApi: 'plt.kafka.base.getApi',
  getConnection: 'plt.kafka.base.getConnection',
  options: 'plt.kafka.base.options',
};

/**
 * Finds the hooks on the consumer itself rather than importing the client: the package entry never
 * loads @platformatic/kafka, and a second copy of the client (a bundler's, a loader's) cannot mismatch
 * them. Null when `consumer` is no @platformatic/kafka client.
 */
export function clientHooks(consumer: unknown): ClientHooks | null {
  const found = new Map<string, symbol>();
  for (let o = consumer; o !== null && typeof o === 'object'; o = Object.getPrototypeOf(o)) {
    for (const symbol of Object.getOwnPropertySymbols(o)) {
      if (symbol.description !== undefined && !found.has(symbol.description))
        found.set(symbol.description, symbol);
    }
  }
  const getApi = found.get(HOOKS.getApi);
  const getConnection = found.get(HOOKS.getConnection);
  const options = found.get(HOOKS.options);
  return getApi && getConnection && options ? { getApi, getConnection, options } : null;
}

interface ClientError {
  apiCode?: number;
  errors?: ClientError[];
}

/** Whether a @platformatic/kafka error carries this Kafka error code (errors nest: retries, per partition). */
export function hasErrorCode(error: unknown, code: number): boolean {
  const e = error as ClientError | null | undefined;
  if (e === null || typeof e !== 'object') return false;
  return (
    e.apiCode === code || (Array.isArray(e.errors) && e.errors.some((inner) => hasErrorCode(inner, code)))
  );
}

/** Kafka protocol error codes the adapter reacts to. */
export const ErrorCodes = {
  OFFSET_OUT_OF_RANGE: 1,
  UNKNOWN_MEMBER_ID: 25,
  FENCED_MEMBER_EPOCH: 110,
  UNRELEASED_INSTANCE_ID: 111,
} as const;

/** The parsed response a @platformatic/kafka error carries (errors nest: retries, per partition). */
export function responseOf<Response>(
  error: unknown,
  has: (response: object) => boolean,
): Response | undefined {
  const e = error as { response?: unknown; errors?: unknown[] } | null | undefined;
  if (e === null || typeof e !== 'object') return undefined;
  if (typeof e.response === 'object' && e.response !== null && has(e.response)) return e.response as Response;
  for (const inner of Array.isArray(e.errors) ? e.errors : []) {
    const found = responseOf<Response>(inner, has);
    if (found !== undefined) return found;
  }
  return undefined;
}
