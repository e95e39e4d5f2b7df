import type { DataSource } from 'typeorm';
import type { EventStore } from '../../libs/event-store/src';
import { ProjectionCheckpoint, ScaffoldRunRebuildRow } from './entities';
import { applyEvents, PROJECTOR } from './projector';

const REBUILD_CHECKPOINT = 'projector-rebuild';
const BATCH = 1000;

export interface RebuildResult {
  events: number;
  rows: number;
  seconds: number;
}

/**
 * Rebuilds the read-model from sequence 1 into a fresh table while the service keeps serving the
 * live one, then swaps them in one short transaction: the live table is locked, the new one catches
 * up to the live projector's checkpoint, and the names are exchanged. The old table is dropped
 * unless `keepOld`.
 */
export async function rebuildProjection(store: EventStore, ds: DataSource, opts: { keepOld?: boolean; onProgress?: (seq: number) => void } = {}): Promise<RebuildResult> {
  const started = Date.now();
  await ds.query('DROP TABLE IF EXISTS scaffold_runs_rebuild');
  await ds.query('DROP TABLE IF EXISTS scaffold_runs_old');
  await ds.query('CREATE TABLE scaffold_runs_rebuild (LIKE scaffold_runs INCLUDING ALL)');
  let events = 0;
  const replay = async (fromSeq: number, untilSeq: number, m = ds.manager) => {
    let next: number | null = fromSeq;
    while (next !== null && next <= untilSeq) {
      const page = await store.readRange({ fromSeq: next, limit: BATCH });
      const batch = page.events.filter((e) => e.seq <= untilSeq);
      const apply = (tx: typeof m) => applyEvents(tx, batch, REBUILD_CHECKPOINT, ScaffoldRunRebuildRow);
      if (m === ds.manager) await ds.transaction(apply);
      else await apply(m);
      events += batch.length;
      if (batch.length) opts.onProgress?.(batch[batch.length - 1].seq);
      next = page.nextSeq;
    }
  };
  const streamLast = await store.lastSeq();
  await replay(1, streamLast);
  await ds.transaction(async (m) => {
    await m.query('LOCK TABLE scaffold_runs IN ACCESS EXCLUSIVE MODE');
    const live = await m.getRepository(ProjectionCheckpoint).findOne({ where: { name: PROJECTOR } });
    const liveSeq = Number(live?.last_seq ?? 0);
    if (liveSeq > streamLast) await replay(streamLast + 1, liveSeq, m);
    await m.query('ALTER TABLE scaffold_runs RENAME TO scaffold_runs_old');
    await m.query('ALTER TABLE scaffold_runs_rebuild RENAME TO scaffold_runs');
  });
  if (!opts.keepOld) await ds.query('DROP TABLE scaffold_runs_old');
  const [{ count }] = await ds.query('SELECT count(*)::int AS count FROM scaffold_runs');
  return { events, rows: count, seconds: (Date.now() - started) / 1000 };
}
