import { DeliveryModule } from '../delivery/delivery.module';
import { DynamicModule, Module } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/config';
import { ConfigModule } from '../config/config.module';
import { GenerationModule } from '../generation/generation.module';
import { GitModule } from '../git/git.module';
import { managementClusterImports } from '../kubernetes/lazy-modules';
import { LoggingModule } from '../logging/logging.module';
import { RunnerApiClient, RunnerApiSettings } from '../runner/runner-api-client';
import { RunnerSteps } from '../runner/runner-steps';

/**
 * scaffold-runner: the steps of one run, read and reported through the service's runner API with the
 * run's own credential, and management-cluster access where the environment provides it (in a Job:
 * the service account). No NATS, no HTTP server, no read-model.
 */
@Module({})
export class RunnerModule {
  static forRoot(config: AppConfig, logger: Logger, api: RunnerApiSettings): DynamicModule {
    const onRetry = (request: string, err: string, attempt: number) =>
      logger.warn({ request, err, attempt }, 'the service did not answer; sending the same request again');
    return {
      module: RunnerModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot(logger),
        GenerationModule.forRoot(),
        GitModule,
        DeliveryModule,
        ...managementClusterImports(config),
      ],
      providers: [{ provide: RunnerApiClient, useValue: new RunnerApiClient({ ...api, onRetry }) }, RunnerSteps],
    };
  }
}
