import { DataSource, In } from 'typeorm';
import type { EventStore } from '#libs/event-store';
import { evolve, initialState, RunState } from '#libs/run-decider';
import { ProjectionCheckpoint, ScaffoldRunRebuildRow } from './entities';
import { PROJECTOR } from '../event-store/consumer-names';
import { applyEvents, rowOf } from './run-rows';

const REBUILD_CHECKPOINT = 'projector-rebuild';
const BATCH = 1000;
/** Runs folded in memory before they are written (bounds the rebuild's memory). */
const MEMORY_RUNS = 20_000;
/** Rows per statement. */
const UPSERT_ROWS = 5000;
const UPDATED_COLUMNS = [
  'status',
  'step',
  'message',
  'cluster_name',
  'repo_url',
  'branch',
  'infra_commit',
  'full_commit',
  'created_at',
  'updated_at',
  'finished_at',
  'last_seq',
  'state',
];
/**
 * Many rows in one statement and one parameter: PostgreSQL turns the JSON array into rows of the
 * table's own type (far cheaper than an ORM building a statement with a parameter per value).
 */
const UPSERT_SQL = `INSERT INTO scaffold_runs_rebuild SELECT * FROM jsonb_populate_recordset(NULL::scaffold_runs_rebuild, $1::jsonb)
  ON CONFLICT (id) DO UPDATE SET ${UPDATED_COLUMNS.map((c) => `${c} = EXCLUDED.${c}`).join(', ')}`;

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
export interface RebuildOptions {
  keepOld?: boolean;
  onProgress?: (seq: number) => void;
  /** Events per stream read (default 1000) and runs held in memory before they are written (default 20,000). */
  pageSize?: number;
  memoryRuns?: number;
}

export async function rebuildProjection(
  store: EventStore,
  ds: DataSource,
  opts: RebuildOptions = {},
): Promise<RebuildResult> {
  const started = Date.now();
  await ds.query('DROP TABLE IF EXISTS scaffold_runs_rebuild');
  await ds.query('DROP TABLE IF EXISTS scaffold_runs_old');
  await ds.query('CREATE TABLE scaffold_runs_rebuild (LIKE scaffold_runs INCLUDING ALL)');
  const streamLast = await store.lastSeq();
  const events = await foldInto(store, ds, streamLast, opts);
  let caughtUp = 0;
  await ds.transaction(async (m) => {
    await m.query('LOCK TABLE scaffold_runs IN ACCESS EXCLUSIVE MODE');
    const live = await m.getRepository(ProjectionCheckpoint).findOne({ where: { name: PROJECTOR } });
    // What the live projector applied while the rebuild read: the same rules, event by event, under the lock.
    for (let next: number | null = streamLast + 1; next !== null && next <= Number(live?.last_seq ?? 0);) {
      const page = await store.readRange({ fromSeq: next, limit: BATCH });
      const batch = page.events.filter((e) => e.seq <= Number(live!.last_seq));
      await applyEvents(m, batch, REBUILD_CHECKPOINT, ScaffoldRunRebuildRow);
      caughtUp += batch.length;
      next = page.nextSeq;
    }
    await m.query('ALTER TABLE scaffold_runs RENAME TO scaffold_runs_old');
    await m.query('ALTER TABLE scaffold_runs_rebuild RENAME TO scaffold_runs');
  });
  if (!opts.keepOld) await ds.query('DROP TABLE scaffold_runs_old');
  const [{ count }] = await ds.query('SELECT count(*)::int AS count FROM scaffold_runs');
  return { events: events + caughtUp, rows: count, seconds: (Date.now() - started) / 1000 };
}

/**
 * Folds the stream up to `untilSeq` into the fresh table. Runs are folded in memory and written once
 * each, in multi-row upserts, rather than read and written back for every page: the table is new and
 * only this rebuild writes it. Memory stays bounded: past MEMORY_RUNS runs the folded ones are written
 * and dropped, and a run seen again later is read back from the table. Returns the events read.
 */
async function foldInto(store: EventStore, ds: DataSource, untilSeq: number, opts: RebuildOptions): Promise<number> {
  const { pageSize = BATCH, memoryRuns = MEMORY_RUNS } = opts;
  const folding = new Map<string, { state: RunState; lastSeq: number }>();
  const written = new Set<string>();
  const table = ds.getRepository(ScaffoldRunRebuildRow);
  let events = 0;
  let lastSeq = 0;
  const flush = async () => {
    const rows = [...folding].filter(([, r]) => r.state.request).map(([id, r]) => rowOf(id, r.state, r.lastSeq));
    await ds.transaction(async (m) => {
      for (let i = 0; i < rows.length; i += UPSERT_ROWS)
        await m.query(UPSERT_SQL, [JSON.stringify(rows.slice(i, i + UPSERT_ROWS))]);
      await m
        .getRepository(ProjectionCheckpoint)
        .save({ name: REBUILD_CHECKPOINT, last_seq: String(lastSeq), updated_at: new Date() });
    });
    for (const id of folding.keys()) written.add(id);
    folding.clear();
  };
  await store.scan({ fromSeq: 1, untilSeq, batchSize: pageSize }, async (batch) => {
    const readBack = [...new Set(batch.map((e) => e.run_id))].filter((id) => written.has(id) && !folding.has(id));
    if (readBack.length > 0)
      for (const r of await table.find({ where: { id: In(readBack) } }))
        folding.set(r.id, { state: r.state, lastSeq: Number(r.last_seq) });
    for (const e of batch) {
      const before = folding.get(e.run_id) ?? { state: initialState, lastSeq: 0 };
      if (e.seq > before.lastSeq) folding.set(e.run_id, { state: evolve(before.state, e), lastSeq: e.seq });
    }
    events += batch.length;
    lastSeq = batch[batch.length - 1].seq;
    opts.onProgress?.(lastSeq);
    if (folding.size >= memoryRuns) await flush();
  });
  await flush();
  return events;
}
