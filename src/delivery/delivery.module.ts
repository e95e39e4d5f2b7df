import { Module } from '@nestjs/common';
import type { Logger } from 'pino';
import type { ForgeResolver } from '#libs/delivery/forge-port';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { LOGGER } from '../logging/logging.module';

/** The token of the process's forges (null when FORGE_DEFAULTS names none: no merge-request delivery). */
export const FORGE_RESOLVER = Symbol('FORGE_RESOLVER');

/**
 * The forges of merge-request delivery, from FORGE_*: the adapters (and the forges' client packages) are loaded
 * only when the settings name a forge, so a service that only pushes never pays for them. The forge calls are
 * logged at debug level, by method and path, never with a header.
 */
export async function forgeResolver(config: AppConfig, logger: Logger): Promise<ForgeResolver | null> {
  if (config.forges.defaults.length === 0) return null;
  const { createForgeResolver } = await import('#libs/delivery/forge-resolver');
  return createForgeResolver(config.forges, { log: (line) => logger.debug({ forge: line }, 'forge call') });
}

/** Merge-request delivery's forges for the steps (the service's consumers and a runner Job's). */
@Module({
  providers: [{ provide: FORGE_RESOLVER, inject: [APP_CONFIG, LOGGER], useFactory: forgeResolver }],
  exports: [FORGE_RESOLVER],
})
export class DeliveryModule {}
