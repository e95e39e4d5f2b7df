import { DataSource, DataSourceOptions } from 'typeorm';
import { CreateReadModel1764700000000 } from '../../migrations/1764700000000-CreateReadModel';
import { ProjectionCheckpoint, ScaffoldRunRebuildRow, ScaffoldRunRow } from './entities';

/** The read-model's TypeORM settings: used by @nestjs/typeorm in the service and by the CLI tools. */
export function readModelOptions(url: string): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: [ScaffoldRunRow, ScaffoldRunRebuildRow, ProjectionCheckpoint],
    migrations: [CreateReadModel1764700000000],
    migrationsTableName: 'typeorm_migrations',
    synchronize: false,
    logging: false,
    extra: { max: 10, connectionTimeoutMillis: 3000 },
  };
}

export function makeDataSource(url: string): DataSource {
  return new DataSource(readModelOptions(url));
}
