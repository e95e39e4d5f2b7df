import type { INestApplicationContext } from '@nestjs/common';
import type { Logger } from 'pino';

/**
 * SIGTERM/SIGINT close the application (Nest's lifecycle hooks: processors stop pulling, in-flight
 * steps get SHUTDOWN_GRACE_SECONDS, NATS is drained, PostgreSQL closed), then the process logs that
 * it stopped and exits 0. Nest's enableShutdownHooks() is not used: it re-sends the signal after
 * closing, and the process would die with 143 before the drain finished.
 */
export function closeOnSignals(app: INestApplicationContext, logger: Logger, name: string, graceMs: number): void {
  let stopping = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, grace_ms: graceMs }, `${name} stopping`);
    app.close().then(
      () => {
        logger.info({ signal }, `${name} stopped`);
        process.exit(0);
      },
      (e) => {
        logger.error({ err: String(e) }, `${name} shutdown failed`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}
