import 'reflect-metadata';
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
import type { AppConfig } from '../config/config';
import { natsConnectOptions } from '../config/nats-settings';
import { Metrics } from '../metrics/metrics';
import { ServiceModule } from './service.module';

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
  const app = await NestFactory.create(ServiceModule.forRoot(config, logger), { bodyParser: false, bufferLogs: true });
  app.useLogger(app.get(NestPinoLogger));
  app.getHttpAdapter().getInstance().disable('x-powered-by');
  app.use(jsonBodies());
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
  return app;
}
