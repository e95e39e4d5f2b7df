import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { makeDataSource, migrateUnderLock } from '../../src/projection/data-source';
import { TestDatabase } from '../support/services';

const run = promisify(execFile);

describe('migrations run once however many processes start together', () => {
  let db: TestDatabase;
  beforeEach(async () => (db = await TestDatabase.create()));
  afterEach(() => db.drop());

  it('applies each migration exactly once when four data sources migrate a fresh database at the same moment', async () => {
    const sources = await Promise.all([1, 2, 3, 4].map(() => makeDataSource(db.url).initialize()));
    try {
      const applied = await Promise.all(sources.map((ds) => migrateUnderLock(ds)));
      // One caller applied everything; the others waited for the lock and found nothing pending.
      expect(applied.filter((names) => names.length > 0)).toHaveLength(1);
      expect(applied.flat()).toEqual([
        'CreateReadModel1764700000000',
        'SkippedStreamMessages1764800000000',
        'ClusterOwnerLookup1764900000000',
      ]);
    } finally {
      await Promise.all(sources.map((ds) => ds.destroy()));
    }
    const c = new Client({ connectionString: db.url });
    await c.connect();
    const rows = (await c.query('SELECT name FROM typeorm_migrations')).rows;
    const tables = (
      await c.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")
    ).rows.map((r) => r.tablename);
    const indexes = (await c.query("SELECT indexname FROM pg_indexes WHERE tablename = 'scaffold_runs'")).rows.map(
      (r) => r.indexname,
    );
    await c.end();
    expect(indexes).toContain('scaffold_runs_cluster');
    expect(rows).toEqual([
      { name: 'CreateReadModel1764700000000' },
      { name: 'SkippedStreamMessages1764800000000' },
      { name: 'ClusterOwnerLookup1764900000000' },
    ]);

    expect(tables).toEqual(expect.arrayContaining(['scaffold_runs', 'skipped_stream_messages', 'typeorm_migrations']));
  });

  it('the migrate command (what the chart hook Job runs) and a second run after it: applied, then nothing pending', async () => {
    const script = join(__dirname, '../../dist/src/migrate.js');
    const env = { ...process.env, DATABASE_URL: db.url };
    const [first, second] = await Promise.all([run('node', [script], { env }), run('node', [script], { env })]);
    expect([first.stdout.trim(), second.stdout.trim()].sort()).toEqual([
      'applied: CreateReadModel1764700000000, SkippedStreamMessages1764800000000, ClusterOwnerLookup1764900000000',
      'no pending migrations',
    ]);
    expect((await run('node', [script], { env })).stdout.trim()).toBe('no pending migrations');
  });
});
