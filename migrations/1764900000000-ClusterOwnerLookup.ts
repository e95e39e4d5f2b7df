import { MigrationInterface, QueryRunner } from 'typeorm';

/** Who owns a cluster folder is asked before every create and preview: the runs of a cluster name, oldest first. */
export class ClusterOwnerLookup1764900000000 implements MigrationInterface {
  name = 'ClusterOwnerLookup1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX scaffold_runs_cluster ON scaffold_runs (cluster_name, created_at, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX scaffold_runs_cluster');
  }
}
