import { DynamicModule, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import type { StepScope } from '../steps/step-consumers';
import type { AppConfig } from '../config/config';
import { ConfigModule } from '../config/config.module';
import { EventLogModule } from '../event-log/event-log.module';
import { GenerationModule } from '../generation/generation.module';
import { LoggingModule } from '../logging/logging.module';
import { MetricsModule } from '../metrics/metrics.module';
import { StepsModule } from '../steps/steps.module';

/** scaffold-runner: the step processors of one run, on consumers filtered to that run. No HTTP, no read-model, no stream changes. */
@Module({})
export class RunnerModule {
  static forRoot(config: AppConfig, logger: Logger, runId: string, reach: Omit<StepScope, 'onlyRunId'> = {}): DynamicModule {
    return {
      module: RunnerModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot(logger),
        EventLogModule.forRoot({ clientName: `scaffold-runner-${runId}`, applyStreams: false }),
        MetricsModule.forRoot({ endpoint: false }),
        GenerationModule.forRoot(),
        StepsModule.forRoot({ onlyRunId: runId, ...reach }),
      ],
    };
  }
}
