import { AddressInfo, createConnection, createServer, Server, Socket } from 'node:net';

/**
 * One address in front of several backends, as a Kubernetes Service is in front of replicas: each new
 * connection goes to the next backend in turn, and to the one after it when that one refuses (a dead
 * replica). Connections open to a backend that dies are cut, as they would be.
 */
export class FailoverProxy {
  private next = 0;
  private constructor(
    private readonly server: Server,
    private readonly backends: number[],
  ) {}

  static async start(backendPorts: number[]): Promise<FailoverProxy> {
    const server = createServer();
    const proxy = new FailoverProxy(server, backendPorts);
    server.on('connection', (client) => proxy.forward(client, 0));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private forward(client: Socket, tried: number) {
    if (tried >= this.backends.length) return client.destroy();
    const port = this.backends[this.next++ % this.backends.length];
    const upstream = createConnection({ host: '127.0.0.1', port });
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      client.pipe(upstream).pipe(client);
    });
    upstream.on('error', () => (connected ? client.destroy() : this.forward(client, tried + 1)));
    client.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => connected && client.destroy());
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
