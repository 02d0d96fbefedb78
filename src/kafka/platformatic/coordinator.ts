import type { Connection, Consumer } from './client';
import type { ClientHooks } from './hooks';

type Api = ((...args: unknown[]) => void) & {
  async(connection: Connection, ...args: unknown[]): Promise<unknown>;
  version: number;
};

/** The consumer's internal lookup of a protocol API at the version negotiated with the broker. */
type GetApi = (name: string, callback: (error: unknown, api?: Api) => void) => void;

/**
 * Requests to the group's coordinator over the consumer's own connections (its TLS and SASL settings
 * apply), at the API versions it negotiated with the broker.
 */
export class GroupCoordinator {
  constructor(
    private readonly consumer: Consumer,
    private readonly hooks: ClientHooks,
  ) {}

  /** The highest version of `api` both sides speak. */
  version(api: string): Promise<number> {
    return this.api(api).then((found) => found.version);
  }

  async call<Response>(api: string, ...args: unknown[]): Promise<Response> {
    const found = await this.api(api);
    const coordinator = await this.consumer.findGroupCoordinator();
    const metadata = await this.consumer.metadata({ topics: this.consumer.topics.current });
    const broker = metadata.brokers.get(coordinator);
    if (broker === undefined)
      throw new Error(`The group coordinator (node ${coordinator}) is not in the metadata`);
    const connection = await this.consumer.connections.get(broker);
    return (await found.async(connection, ...args)) as Response;
  }

  private api(name: string): Promise<Api> {
    const getApi = (this.consumer as unknown as Record<symbol, GetApi>)[this.hooks.getApi];
    return new Promise((resolve, reject) =>
      getApi.call(this.consumer, name, (error, api) => (error ? reject(error) : resolve(api as Api))),
    );
  }
}
