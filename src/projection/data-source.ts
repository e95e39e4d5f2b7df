import { readFileSync } from 'node:fs';
import { DataSource, DataSourceOptions } from 'typeorm';
import { CreateReadModel1764700000000 } from '../../migrations/1764700000000-CreateReadModel';
import { SkippedStreamMessages1764800000000 } from '../../migrations/1764800000000-SkippedStreamMessages';
import { ClusterOwnerLookup1764900000000 } from '../../migrations/1764900000000-ClusterOwnerLookup';
import { ProjectionCheckpoint, ScaffoldRunRebuildRow, ScaffoldRunRow, SkippedStreamMessage } from './entities';

/**
 * Where the read-model is. TLS: `sslmode=verify-full&sslrootcert=<file>` in the URL, or `sslCaFile`
 * (DATABASE_SSL_CA), which verifies the server's certificate and host name against that CA.
 */
export interface DatabaseSettings {
  url: string;
  sslCaFile?: string;
}

/** The read-model's TypeORM settings: used by @nestjs/typeorm in the service and by the CLI tools. */
export function readModelOptions(db: string | DatabaseSettings): DataSourceOptions {
  const { url, sslCaFile } = typeof db === 'string' ? { url: db, sslCaFile: undefined } : db;
  return {
    type: 'postgres',
    url,
    ...(sslCaFile ? { ssl: { ca: readFileSync(sslCaFile, 'utf8'), rejectUnauthorized: true } } : {}),
    entities: [ScaffoldRunRow, ScaffoldRunRebuildRow, ProjectionCheckpoint, SkippedStreamMessage],
    migrations: [CreateReadModel1764700000000, SkippedStreamMessages1764800000000, ClusterOwnerLookup1764900000000],
    migrationsTableName: 'typeorm_migrations',
    synchronize: false,
    logging: false,
    extra: { max: 10, connectionTimeoutMillis: 3000 },
  };
}

export function makeDataSource(db: string | DatabaseSettings): DataSource {
  return new DataSource(readModelOptions(db));
}

/** DATABASE_URL and DATABASE_SSL_CA as the CLI tools read them (the service reads them through its configuration). */
export const databaseFromEnv = (env: NodeJS.ProcessEnv = process.env): DatabaseSettings => ({
  url: env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
  sslCaFile: env.DATABASE_SSL_CA || undefined,
});

/** One key for every process that migrates this read-model (the hook Job, replicas, `npm run migrate`). */
const MIGRATION_LOCK_KEY = 0x5ca4f01d;

/**
 * Applies pending migrations while holding a PostgreSQL session advisory lock, so replicas starting
 * together (or a hook Job racing a replica) apply each migration once: the others wait, then find
 * nothing pending. Returns the names applied by this caller.
 */
export async function migrateUnderLock(ds: DataSource): Promise<string[]> {
  const lock = ds.createQueryRunner();
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    const applied = await ds.runMigrations({ transaction: 'each' });
    return applied.map((m) => m.name);
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await lock.release();
  }
}
