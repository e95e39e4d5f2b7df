import type { OnApplicationShutdown } from '@nestjs/common';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import type { Logger } from 'pino';

/** The process's NATS connection for the event log; drained (pending publishes flushed) when the app shuts down. */
export class NatsClient implements OnApplicationShutdown {
  private constructor(
    readonly connection: NatsConnection,
    private readonly logger: Logger,
  ) {}

  static async connect(servers: string, name: string, logger: Logger): Promise<NatsClient> {
    const connection = await connect({ servers, name, maxReconnectAttempts: -1, reconnectTimeWait: 500 });
    return new NatsClient(connection, logger);
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.connection.isClosed()) return;
    await this.connection.drain().catch((e) => this.logger.warn({ err: String(e) }, 'NATS drain failed'));
  }
}
