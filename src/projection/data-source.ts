import { DataSource } from 'typeorm';
import { CreateReadModel1764700000000 } from '../../migrations/1764700000000-CreateReadModel';
import { ProjectionCheckpoint, ScaffoldRunRebuildRow, ScaffoldRunRow } from './entities';

export function makeDataSource(url: string): DataSource {
  return new DataSource({
    type: 'postgres',
    url,
    entities: [ScaffoldRunRow, ScaffoldRunRebuildRow, ProjectionCheckpoint],
    migrations: [CreateReadModel1764700000000],
    migrationsTableName: 'typeorm_migrations',
    synchronize: false,
    logging: false,
    extra: { max: 10, connectionTimeoutMillis: 3000 },
  });
}
