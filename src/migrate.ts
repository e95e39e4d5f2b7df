/** npm run migrate: applies pending TypeORM migrations to DATABASE_URL. */
import 'reflect-metadata';
import { makeDataSource } from './projection/data-source';

async function main() {
  const ds = makeDataSource(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  await ds.initialize();
  const applied = await ds.runMigrations({ transaction: 'each' });
  console.log(applied.length ? `applied: ${applied.map((m) => m.name).join(', ')}` : 'no pending migrations');
  await ds.destroy();
}

main().catch((e) => {
  console.error(`migrate: ${e.message}`);
  process.exit(1);
});
