import { DynamicModule, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/config';
import { ConfigModule } from '../config/config.module';
import { EventStoreModule } from '../event-store/event-store.module';
import { GenerationModule } from '../generation/generation.module';
import { managementClusterImports } from '../kubernetes/lazy-modules';
import { LoggingModule } from '../logging/logging.module';
import { MetricsModule } from '../metrics/metrics.module';
import { StepsModule } from '../steps/steps.module';

/**
 * scaffold-runner: the step consumers of one run, on consumers filtered to that run, and management-cluster
 * access where the environment provides it (in a Job: the service account). No HTTP, no read-model, no stream changes.
 */
@Module({})
export class RunnerModule {
  static forRoot(config: AppConfig, logger: Logger, runId: string): DynamicModule {
    return {
      module: RunnerModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot(logger),
        EventStoreModule.forRoot({ clientName: `scaffold-runner-${runId}`, applyStreams: false }),
        MetricsModule.forRoot({ endpoint: false }),
        GenerationModule.forRoot(),
        ...managementClusterImports(config),
        StepsModule.forRoot(runId),
      ],
    };
  }
}
