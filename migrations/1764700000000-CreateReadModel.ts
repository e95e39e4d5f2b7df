import { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateReadModel1764700000000 implements MigrationInterface {
  name = 'CreateReadModel1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE scaffold_runs (
      id uuid PRIMARY KEY,
      status text NOT NULL,
      step text,
      message text NOT NULL,
      cluster_name text NOT NULL,
      repo_url text NOT NULL,
      branch text NOT NULL,
      infra_commit text,
      full_commit text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      finished_at timestamptz,
      last_seq bigint NOT NULL,
      state jsonb NOT NULL
    )`);
    await q.query(`CREATE INDEX scaffold_runs_list ON scaffold_runs (created_at DESC, id DESC)`);
    await q.query(
      `CREATE INDEX scaffold_runs_active ON scaffold_runs (repo_url, cluster_name) WHERE status IN ('queued', 'running')`,
    );
    await q.query(
      `CREATE TABLE projection_checkpoints (name text PRIMARY KEY, last_seq bigint NOT NULL, updated_at timestamptz NOT NULL)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE projection_checkpoints');
    await q.query('DROP TABLE scaffold_runs');
  }
}
