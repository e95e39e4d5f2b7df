import 'reflect-metadata';
import { createServiceApp } from './app/service-app';
import { closeOnSignals } from './app/shutdown';
import { loadConfig } from './config/config';
import { makeLogger } from './logging/logger';
import { VERSION } from '#libs/cli/version';

/** The service process: configuration checked, the hybrid Nest application listening, a clean stop on SIGTERM. */
async function main() {
  const config = loadConfig();
  const logger = makeLogger(config.logLevel);
  const app = await createServiceApp(config, logger);
  closeOnSignals(app, logger, 'gitops-scaffolder', config.shutdownGraceMs);
  await app.listen(config.port, config.host);
  logger.info(
    { port: config.port, version: VERSION, executor: config.executor, role: config.role },
    'gitops-scaffolder running',
  );
}

main().catch((e) => {
  console.error(`gitops-scaffolder: ${e.message}`);
  process.exit(1);
});
