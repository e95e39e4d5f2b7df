import type { OnApplicationShutdown } from '@nestjs/common';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import type { Logger } from 'pino';
import { natsConnectOptions, NatsSettings } from '../config/nats-settings';

/** NATS refused this process at start: wrong credentials, a TLS failure, or no server answering. */
export class NatsConnectError extends Error {}

/**
 * Why a first connection failed, in words an operator can act on. Authentication and TLS failures
 * are not retried: waiting does not fix a wrong password or an untrusted certificate.
 */
export function connectFailure(e: unknown, settings: NatsSettings): NatsConnectError {
  const err = e as { message?: string; code?: string; cause?: { message?: string } };
  const text = `${err.message ?? e} ${err.cause?.message ?? ''}`;
  const where = `NATS at ${settings.description}`;
  if (/authorization violation|authentication|auth(orization)? (timeout|expired)|user authentication/i.test(text))
    return new NatsConnectError(`${where} refused the credentials (${err.message})`);
  if (/certificate|tls|ssl|self.signed|unable to verify|handshake|ERR_TLS/i.test(text))
    return new NatsConnectError(`${where}: TLS failed (${(err.cause?.message ?? err.message ?? '').trim()})`);
  return new NatsConnectError(`${where} is not reachable (${err.message ?? e})`);
}

/** A first connection to NATS (reconnecting after), or the error saying in words why there is none. */
export async function openNatsConnection(settings: NatsSettings, name: string): Promise<NatsConnection> {
  try {
    return await connect(natsConnectOptions(settings, name));
  } catch (e) {
    throw connectFailure(e, settings);
  }
}

/** The process's NATS connection for the event log; drained (pending publishes flushed) when the app shuts down. */
export class NatsClient implements OnApplicationShutdown {
  private constructor(
    readonly connection: NatsConnection,
    private readonly logger: Logger,
  ) {}

  static async connect(settings: NatsSettings, name: string, logger: Logger): Promise<NatsClient> {
    const connection = await openNatsConnection(settings, name);
    logger.info({ nats: settings.description, server: connection.getServer() }, 'connected to NATS');
    return new NatsClient(connection, logger);
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.connection.isClosed()) return;
    await this.connection.drain().catch((e) => this.logger.warn({ err: String(e) }, 'NATS drain failed'));
  }
}
