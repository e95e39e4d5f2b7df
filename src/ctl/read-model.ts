/**
 * What the stream commands read and write of the read-model (PostgreSQL): loaded only by the commands that use it
 * (status, replay --apply, rebuild-projection), so that the others start without TypeORM and the database driver.
 */
import type { DataSource } from 'typeorm';
import type { EventStore } from '#libs/event-store';
import type { StoredEvent } from '#libs/events';
import type { RefusedEvent } from '#libs/run-decider';
import { databaseFromEnv, makeDataSource } from '../projection/data-source';
import { SkippedStreamMessage } from '../projection/entities';
import { applyEvent } from '../projection/run-rows';
import { rebuildProjection } from '../projection/rebuild';
import { RunReadModel } from '../projection/run-read-model';

export class CtlReadModel {
  private constructor(private readonly ds: DataSource) {}

  /** Connected to DATABASE_URL (DATABASE_SSL_CA), as the other CLI tools connect. */
  static async open(env: NodeJS.ProcessEnv): Promise<CtlReadModel> {
    const ds = makeDataSource(databaseFromEnv(env));
    await ds.initialize();
    return new CtlReadModel(ds);
  }

  /** One event into the read-model, as the projector applies it; whether it changed a row. */
  apply(event: StoredEvent): Promise<boolean> {
    return this.ds.transaction((m) => applyEvent(m, event));
  }

  rebuild(store: EventStore, opts: { keepOld: boolean }) {
    return rebuildProjection(store, this.ds, opts);
  }

  /** Active runs without an event since `since`, as `status` lists them. */
  async stuckRuns(since: Date) {
    const stuck = await new RunReadModel(this.ds).stuck(since);
    return stuck.map((r) => ({ id: r.id, status: r.status, step: r.step, updated_at: r.updated_at.toISOString() }));
  }

  /** What the projector recorded of messages no run accepted: the newest 20 of each kind. */
  async skippedMessages() {
    const invalid = await this.ds.getRepository(SkippedStreamMessage).find({ order: { seq: 'DESC' }, take: 20 });
    const rows: Array<{ id: string; refused: RefusedEvent[] }> = await this.ds.query(
      `SELECT id, state->'refused' AS refused FROM scaffold_runs WHERE jsonb_array_length(COALESCE(state->'refused', '[]'::jsonb)) > 0 ORDER BY updated_at DESC LIMIT 20`,
    );
    return {
      invalid_messages: invalid.map((m) => ({ seq: Number(m.seq), subject: m.subject, reason: m.reason })),
      refused_events: rows.flatMap((r) => r.refused.map((e) => ({ run_id: r.id, ...e }))),
    };
  }

  close(): Promise<void> {
    return this.ds.destroy();
  }
}
