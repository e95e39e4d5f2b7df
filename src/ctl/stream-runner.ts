/** How scaffolderctl runs a stream command: the service's modules for NATS and PostgreSQL, in a context of their own. */
import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Logger as NestPinoLogger } from 'nestjs-pino';
import type { DataSource } from 'typeorm';
import { UsageError } from '../../libs/cli/src';
import { JetStreamEventStore } from '../../libs/event-store/src';
import { CtlModule } from '../app/ctl.module';
import { AppConfig, loadConfig } from '../config/config';
import { makeLogger } from '../logging/logger';
import { makeDataSource } from '../projection/data-source';
import { EXIT } from './api-commands';
import { STREAM_COMMANDS } from './stream-commands';

/** A stream command with its own context of the service's modules, closed when it is done; its exit code. */
export async function runStreamCommand(
  name: string,
  args: string[],
  values: Record<string, any>,
  env: NodeJS.ProcessEnv,
  { out, err }: { out: (line: string) => void; err: (text: string) => void },
): Promise<number> {
  let config: AppConfig;
  try {
    config = loadConfig(env, { requireApiKey: false });
  } catch (e) {
    err(`scaffolderctl: ${(e as Error).message}\n`);
    return EXIT.usage;
  }
  let app: INestApplicationContext | undefined;
  let ds: DataSource | undefined;
  try {
    // Quiet by default: the output is the command's; LOG_LEVEL=debug shows the framework's lines.
    const logger = makeLogger(env.LOG_LEVEL ? config.logLevel : 'warn');
    app = await NestFactory.createApplicationContext(CtlModule.forRoot(config, logger), {
      bufferLogs: true,
      abortOnError: false,
      // A failure to connect is the one line below, not the framework's stack first (LOG_LEVEL=debug shows both).
      ...(/^(debug|trace)$/.test(env.LOG_LEVEL ?? '') ? {} : { logger: false as const }),
    });
    app.useLogger(app.get(NestPinoLogger));
    const store = app.get(JetStreamEventStore);
    const db = async () => {
      if (!ds) {
        ds = makeDataSource({ url: config.databaseUrl, sslCaFile: config.databaseSslCa });
        await ds.initialize();
      }
      return ds;
    };
    await STREAM_COMMANDS[name]({ store, db, out, json: Boolean(values.json) }, args, values);
    return 0;
  } catch (e) {
    err(`scaffolderctl: ${(e as Error).message.split('\n')[0]}\n`);
    return e instanceof UsageError ? EXIT.usage : 1;
  } finally {
    await ds?.destroy().catch(() => undefined);
    await app?.close().catch(() => undefined);
  }
}
