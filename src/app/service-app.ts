import 'reflect-metadata';
import type { Server } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { CustomStrategy } from '@nestjs/microservices';
import { Logger as NestPinoLogger } from 'nestjs-pino';
import type { Logger } from 'pino';
import { InboxOnlyServerNats, logAndCount } from '../common/inbox-only-server-nats';
import { jsonBodies } from '../common/json-body.middleware';
import { CONSOLE_PATH, consoleRouter } from '../console/console-assets';
import { NatsJsonDeserializer } from '../common/nats-json.deserializer';
import { NatsJsonSerializer } from '../common/nats-json.serializer';
import { AppConfig, servesApi } from '../config/config';
import { natsConnectOptions } from '../config/nats-settings';
import { Metrics } from '../metrics/metrics';
import { ServiceModule } from './service.module';

/**
 * How long an idle keep-alive connection stays open. Node's 5 s is shorter than what sits in front of a service
 * (load balancers keep idle connections 60 s): a request sent on a connection the server is just closing is reset
 * (ECONNRESET; seen from clients on a loaded machine). Longer than theirs, so the client side closes first.
 */
export const HTTP_KEEP_ALIVE_MS = 65_000;

/** The NATS request/reply API's queue group: replicas share the scaffolds.v1.* subjects. */
export const NATS_QUEUE = 'gitops-scaffolder';

/**
 * The service as a hybrid Nest application: HTTP (Express) and the NATS transport of
 * @nestjs/microservices with plain-JSON (de)serialisation, answering only callers' inboxes
 * (InboxOnlyServerNats). Started by main.ts and by the tests.
 */
export async function createServiceApp(config: AppConfig, logger: Logger): Promise<INestApplication> {
  // git must fail on missing credentials, never wait at a prompt.
  process.env.GIT_TERMINAL_PROMPT = '0';
  // A dependency that cannot start (NATS unreachable) rejects here and the caller reports it in one line: no
  // abort from Nest's handler, and no framework logger before ours (it printed the stack and the start-up log).
  const app = await NestFactory.create(ServiceModule.forRoot(config, logger), {
    bodyParser: false,
    logger: false,
    abortOnError: false,
  });
  app.useLogger(app.get(NestPinoLogger));
  app.getHttpAdapter().getInstance().disable('x-powered-by');
  const http: Server = app.getHttpServer();
  http.keepAliveTimeout = HTTP_KEEP_ALIVE_MS;
  // Headers must be allowed to arrive over a kept connection's whole idle time (Node requires headersTimeout above it).
  http.headersTimeout = HTTP_KEEP_ALIVE_MS + 1000;
  // Runs, logs and plans are answered to a key sent in X-Api-Key, which shared caches do not treat as
  // authorisation (RFC 9111 §3.5): no cache may keep them.
  app.use('/api', (_req: unknown, res: { setHeader(name: string, value: string): void }, next: () => void) => {
    res.setHeader('cache-control', 'no-store');
    next();
  });
  app.use(jsonBodies());
  // A worker replica has no public API: no console, and no NATS subscription in the API's queue group.
  if (servesApi(config.role)) await serveConsoleAndNatsApi(app, config, logger);
  return app;
}

async function serveConsoleAndNatsApi(app: INestApplication, config: AppConfig, logger: Logger): Promise<void> {
  app.use(CONSOLE_PATH, consoleRouter());
  const natsApi = new InboxOnlyServerNats(
    {
      ...natsConnectOptions(config.nats, 'gitops-scaffolder-api'),
      queue: NATS_QUEUE,
      serializer: new NatsJsonSerializer(),
      deserializer: new NatsJsonDeserializer(),
    },
    config.natsReplyPrefixes,
    logAndCount(logger, app.get(Metrics).natsRepliesRefused),
  );
  app.connectMicroservice<CustomStrategy>({ strategy: natsApi }, { inheritAppConfig: true });
  await app.startAllMicroservices();
}
