import { Module } from '@nestjs/common';
import { SHIPPED_TEMPLATE } from '#libs/generator';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { EnvironmentQueries } from './environment-queries';
import { EnvironmentsController } from './environments.controller';
import { EnvironmentsRpcController } from './environments.rpc.controller';
import { GitReferenceHistory, REFERENCE_HISTORY } from './reference-history';

/** The environments API (read-only): REST and NATS over the runs each environment was made by, and the reference's history. */
@Module({
  controllers: [EnvironmentsController, EnvironmentsRpcController],
  providers: [
    EnvironmentQueries,
    {
      provide: REFERENCE_HISTORY,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => new GitReferenceHistory(config.steps.templateDir ?? SHIPPED_TEMPLATE),
    },
  ],
})
export class EnvironmentsModule {}
