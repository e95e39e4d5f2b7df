import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import type { Logger } from 'pino';
import { ApiExceptionFilter } from '../common/api-exception.filter';
import { ApiKeyGuard } from '../common/api-key.guard';
import { RejectedBodyPipe } from '../common/rejected-body.pipe';
import { AppConfig, doesWork, servesApi } from '../config/config';
import { ConfigModule } from '../config/config.module';
import { EventStoreModule } from '../event-store/event-store.module';
import { GenerationModule } from '../generation/generation.module';
import { HealthModule } from '../health/health.module';
import { kubernetesExecutorModule, managementClusterImports, scaffoldJobsModule } from '../kubernetes/lazy-modules';
import { LoggingModule } from '../logging/logging.module';
import { LatencyInterceptor } from '../metrics/latency.interceptor';
import { MetricsModule } from '../metrics/metrics.module';
import { ProjectionModule } from '../projection/projection.module';
import { RunnerApiModule } from '../runner-api/runner-api.module';
import { ScaffoldsModule } from '../scaffolds/scaffolds.module';
import { EnvironmentsModule } from '../environments/environments.module';
import { StepsModule } from '../steps/steps.module';

/**
 * Where the steps run: in this process (local), in one Job per run (kubernetes), or elsewhere
 * (API-only replica). The Kubernetes client is loaded only where the management cluster is reachable;
 * local step consumers then reach target clusters and credentials Secrets as a runner Job does.
 */
function executorModules(config: AppConfig): NonNullable<DynamicModule['imports']> {
  const management = managementClusterImports(config);
  if (config.executor === 'kubernetes') return [...management, kubernetesExecutorModule()];
  if (!config.runStepWorkers) return management;
  return [...management, StepsModule.forRoot()];
}

/** An API replica's reach into the management cluster: the Secrets a request names, and the Jobs' pod logs. */
function apiClusterModules(config: AppConfig): NonNullable<DynamicModule['imports']> {
  const management = managementClusterImports(config);
  return config.executor === 'kubernetes' ? [...management, scaffoldJobsModule()] : management;
}

/**
 * What the replica's role runs (SERVICE_ROLE): an `api` replica answers the controllers and reads the read-model
 * (the management cluster only for the Secrets a request names and the Jobs' pod logs); a `worker` replica projects and runs the runs' work
 * with no public API; `all` does both. Split, the API's event loop carries none of the runs' coordination.
 */
function roleModules(config: AppConfig): NonNullable<DynamicModule['imports']> {
  const work = doesWork(config.role);
  return [
    ProjectionModule.forRoot({ project: work }),
    ...(servesApi(config.role) ? [ScaffoldsModule, EnvironmentsModule] : []),
    ...(work ? [RunnerApiModule, ...executorModules(config)] : apiClusterModules(config)),
  ];
}

/**
 * The service: REST and NATS APIs, the projector, and the step processors or the Kubernetes executor, as its role
 * says. The API-key guard, the exception filter, the latency interceptor and the NATS body check are global,
 * so they apply to every REST route and every @MessagePattern alike (a new handler is authenticated
 * unless it is marked @Public()).
 */
@Module({})
export class ServiceModule {
  static forRoot(config: AppConfig, logger: Logger): DynamicModule {
    return {
      module: ServiceModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot(logger),
        EventStoreModule.forRoot({ clientName: 'gitops-scaffolder', applyStreams: true }),
        MetricsModule.forRoot({ endpoint: true }),
        GenerationModule.forRoot(),
        HealthModule,
        ...roleModules(config),
      ],
      providers: [
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
        { provide: APP_INTERCEPTOR, useClass: LatencyInterceptor },
        { provide: APP_PIPE, useClass: RejectedBodyPipe },
      ],
    };
  }
}
