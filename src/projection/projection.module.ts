import { DynamicModule, Module } from '@nestjs/common';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { DataSource } from 'typeorm';
import { migrateUnderLock, readModelOptions } from './data-source';
import { Projector } from './projector';
import { RunGauges } from './run-gauges';
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
            ...readModelOptions({ url: config.databaseUrl, sslCaFile: config.databaseSslCa }),
            migrationsRun: config.migrationsRun,
            retryAttempts: 2,
            retryDelay: 1000,
          }),
          // Migrations under an advisory lock rather than TypeORM's migrationsRun: replicas starting
          // together must not race each other (or the chart's hook Job) on the same DDL.
          dataSourceFactory: async (options) => {
            const ds = await new DataSource({ ...options!, migrationsRun: false }).initialize();
            if (options!.migrationsRun) await migrateUnderLock(ds);
            return ds;
          },
        }),
      ],
      // Where it projects (the service) it also reports the active runs as metrics.
      providers: [
        { provide: RunReadModel, inject: [getDataSourceToken()], useFactory: (ds: DataSource) => new RunReadModel(ds) },
        ...(opts.project ? [Projector, RunGauges] : []),
      ],
      exports: [RunReadModel],
    };
  }
}
