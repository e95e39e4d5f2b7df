/**
 * Listeners on loopback that count who connects: to prove that nothing reached them (a remote
 * resource, a redirect's target), or that what connected was cut off (a server that never answers).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer, IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, Server, Socket } from 'node:net';
import type { TestTls } from './certs';

export class CountingListener {
  /** Connections accepted so far. */
  connections = 0;
  private readonly open = new Set<Socket>();

  private constructor(private readonly server: Server) {
    server.on('connection', (socket: Socket) => {
      this.connections++;
      this.open.add(socket);
      socket.on('close', () => this.open.delete(socket));
      socket.on('error', () => undefined);
      // Read (and drop) what the client sends, so its closing is seen; never answer.
      if (server.listenerCount('request') === 0) socket.resume();
    });
  }

  /** Accepts connections and never says a word (an ssh server without a banner, a TLS server that never shakes hands). */
  static silent(): Promise<CountingListener> {
    return new CountingListener(createNetServer()).listen();
  }

  /** An HTTP server answering every request with `answer`. */
  static http(
    answer: (req: IncomingMessage, res: ServerResponse) => void = (_, res) => res.end('kind: ConfigMap\n'),
  ): Promise<CountingListener> {
    return new CountingListener(createHttpServer(answer)).listen();
  }

  /** The same over TLS with the test CA's certificate. */
  static https(tls: TestTls, answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<CountingListener> {
    return new CountingListener(createHttpsServer({ key: tls.keyPem, cert: tls.certPem }, answer)).listen();
  }

  private async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  /** Connections still open (held by a client that was not cut off). */
  get openSockets(): number {
    return this.open.size;
  }

  async close(): Promise<void> {
    for (const s of this.open) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A 302 to `location` for every request. */
export const redirectTo =
  (location: string) =>
  (_req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(302, { location });
    res.end();
  };

/** Processes of this machine whose command line holds `marker` (git, ssh, git-remote-https started for a test's unique URL). */
export function processesWith(marker: string): Array<{ pid: number; command: string }> {
  const found: Array<{ pid: number; command: string }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let command: string;
    try {
      command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
    } catch {
      continue;
    }
    if (command.includes(marker)) found.push({ pid: Number(entry), command: command.trim() });
  }
  return found;
}

/** Waits until `check` holds, up to `ms`; returns whether it did. */
export async function eventually(check: () => boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

/** An HTTP and a silent TCP listener for a suite: started before its tests, closed after; read them in tests only. */
export function useListeners(): { http: CountingListener; tcp: CountingListener } {
  const listeners = {} as { http: CountingListener; tcp: CountingListener };
  beforeAll(async () => {
    listeners.http = await CountingListener.http();
    listeners.tcp = await CountingListener.silent();
  });
  afterAll(async () => {
    await listeners.http?.close();
    await listeners.tcp?.close();
  });
  return listeners;
}
