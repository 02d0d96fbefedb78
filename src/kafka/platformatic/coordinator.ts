import type { ClientHooks, Connection, Consumer } from './client';

type Api = ((...args: unknown[]) => void) & {
  async(connection: Connection, ...args: unknown[]): Promise<unknown>;
  version: number;
};

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
    const connection = await new Promise<Connection>((resolve, reject) =>
      this.hook<(broker: unknown, callback: (error: unknown, connection?: Connection) => void) => void>(
        this.hooks.getConnection,
      )(broker, (error, connection) => (error ? reject(error) : resolve(connection as Connection))),
    );
    return (await found.async(connection, ...args)) as Response;
  }

  private api(name: string): Promise<Api> {
    return new Promise((resolve, reject) =>
      this.hook<(name: string, callback: (error: unknown, api?: Api) => void) => void>(this.hooks.getApi)(
        name,
        (error, api) => (error ? reject(error) : resolve(api as Api)),
      ),
    );
  }

  private hook<Method extends (...args: never[]) => void>(symbol: symbol): Method {
    const method = (this.consumer as unknown as Record<symbol, Method>)[symbol];
    return method.bind(this.consumer) as Method;
  }
}
