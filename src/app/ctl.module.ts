import { DynamicModule, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/config';
import { ConfigModule } from '../config/config.module';
import { EventStoreModule } from '../event-store/event-store.module';
import { LoggingModule } from '../logging/logging.module';

/** scaffolderctl: the event log, read only (what changes a run goes through the service's API), never its stream configuration. */
@Module({})
export class CtlModule {
  static forRoot(config: AppConfig, logger: Logger): DynamicModule {
    return {
      module: CtlModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot(logger),
        EventStoreModule.forRoot({ clientName: 'scaffolderctl', applyStreams: false, readOnly: true }),
      ],
    };
  }
}
