import 'reflect-metadata';
import { loadConfig } from './config';
import { createHttpApp } from './http';
import { makeLogger, Runtime } from './runtime';

async function main() {
  const logger = makeLogger();
  const config = loadConfig();
  const runtime = await Runtime.start(config, logger);
  const app = await createHttpApp(runtime);
  await app.listen(config.port, process.env.HOST ?? '0.0.0.0');
  logger.info({ port: config.port }, 'HTTP API listening');
  const shutdown = async () => {
    await app.close();
    await runtime.stop();
    process.exit(0);
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

main().catch((e) => {
  console.error(`gitops-scaffolder: ${e.message}`);
  process.exit(1);
});
