/**
 * npm run migrate (and the chart's pre-install/pre-upgrade hook Job): applies pending TypeORM
 * migrations to DATABASE_URL under the migration lock, so it never races a replica.
 */
import 'reflect-metadata';
import { databaseFromEnv, makeDataSource, migrateUnderLock } from './projection/data-source';

async function main() {
  const ds = makeDataSource(databaseFromEnv());
  await ds.initialize();
  const applied = await migrateUnderLock(ds);
  console.log(applied.length ? `applied: ${applied.join(', ')}` : 'no pending migrations');
  await ds.destroy();
}

main().catch((e) => {
  console.error(`migrate: ${e.message}`);
  process.exit(1);
});
