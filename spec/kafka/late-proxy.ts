import { createServer, type Server, Socket } from 'node:net';

/**
 * A local port where nothing listens until `open()`, then a TCP proxy to the local broker: a client
 * bootstrapped through it meets a broker that is unreachable, then one that answers, while the shared
 * broker itself keeps running. Only bootstrapping goes through it: the broker's metadata sends clients on
 * to its advertised address.
 */
export class LateProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();

  private constructor(readonly port: number) {}

  /** A proxy on a port that was free a moment ago, not yet listening. */
  static async reserve(): Promise<LateProxy> {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as { port: number };
    await new Promise((resolve) => probe.close(resolve));
    return new LateProxy(port);
  }

  /** The address to bootstrap through. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Connections it forwards now, each counted once. */
  get connections(): number {
    return this.sockets.size / 2;
  }

  /** Starts listening, forwarding every connection to `target` (`host:port`). */
  async open(target: string): Promise<void> {
    const [host, port] = target.split(':');
    const server = createServer((client) => {
      const broker = new Socket();
      for (const socket of [client, broker]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          broker.destroy();
        });
      }
      broker.connect(Number(port), host);
      client.pipe(broker).pipe(client);
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
  }

  /** Stops listening and drops the connections it forwards. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    const server = this.server;
    this.server = null;
    if (server !== null) await new Promise((resolve) => server.close(resolve));
  }
}
