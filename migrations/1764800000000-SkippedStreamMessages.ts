import { MigrationInterface, QueryRunner } from 'typeorm';

/** Messages on event subjects that were not events (skipped by every reader), kept for `scaffolderctl status`. */
export class SkippedStreamMessages1764800000000 implements MigrationInterface {
  name = 'SkippedStreamMessages1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE skipped_stream_messages (seq bigint PRIMARY KEY, subject text NOT NULL, reason text NOT NULL, seen_at timestamptz NOT NULL)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE skipped_stream_messages');
  }
}
