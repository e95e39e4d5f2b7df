import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { readModelOptions } from './data-source';
import { Projector } from './projector';
import { RunReadModel } from './run-read-model';

/**
 * The read-model in PostgreSQL: TypeORM configured from the configuration (migrations at start unless
 * MIGRATIONS_RUN=false), the queries of it, and (where `project`) the projector that writes it.
 */
@Module({})
export class ProjectionModule {
  static forRoot(opts: { project: boolean }): DynamicModule {
    return {
      module: ProjectionModule,
      global: true,
      imports: [
        TypeOrmModule.forRootAsync({
          inject: [APP_CONFIG],
          useFactory: (config: AppConfig) => ({
            ...readModelOptions(config.databaseUrl),
            migrationsRun: config.migrationsRun,
            migrationsTransactionMode: 'each' as const,
            retryAttempts: 2,
            retryDelay: 1000,
          }),
        }),
      ],
      providers: [RunReadModel, ...(opts.project ? [Projector] : [])],
      exports: [RunReadModel],
    };
  }
}
