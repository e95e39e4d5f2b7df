/**
 * The read-model's run rows written from events: what the projector, a rebuild and `scaffolderctl replay --apply`
 * do in their transactions. TypeORM only, no framework: scaffolderctl loads it without NestJS (#49).
 */
import { EntityManager, In } from 'typeorm';
import type { StoredEvent } from '#libs/events';
import { evolve, fold, initialState, RunState } from '#libs/run-decider';
import { withoutNul } from '../common/without-nul';
import { PROJECTOR } from '../event-store/consumer-names';
import { ProjectionCheckpoint, ScaffoldRunRebuildRow, ScaffoldRunRow } from './entities';

type RunTable = typeof ScaffoldRunRow | typeof ScaffoldRunRebuildRow;

/** The read-model row of a run's state. */
export function rowOf(id: string, state: RunState, lastSeq: number) {
  return withoutNul(rowFields(id, state, lastSeq));
}

function rowFields(id: string, state: RunState, lastSeq: number) {
  const r = state.request!;
  return {
    id,
    status: state.status,
    step: state.step,
    message: state.message,
    cluster_name: r.cluster_name,
    repo_url: r.repo_url,
    branch: r.branch,
    infra_commit: state.infraCommit,
    full_commit: state.fullCommit,
    created_at: new Date(state.createdAt!),
    updated_at: new Date(state.updatedAt!),
    finished_at: state.finishedAt ? new Date(state.finishedAt) : null,
    last_seq: String(lastSeq),
    state,
  };
}

/**
 * Applies events (in stream order) to the read-model: the touched rows are read once (locked),
 * folded in memory, and written back in one upsert, with the checkpoint, in the caller's transaction.
 * A row's last_seq makes a redelivered or replayed event a no-op. Returns how many events changed a row.
 */
export async function applyEvents(
  m: EntityManager,
  events: StoredEvent[],
  checkpoint = PROJECTOR,
  table: RunTable = ScaffoldRunRow,
): Promise<number> {
  if (events.length === 0) return 0;
  const repo = m.getRepository(table);
  const ids = [...new Set(events.map((e) => e.run_id))];
  const existing = await repo.find({ where: { id: In(ids) }, lock: { mode: 'pessimistic_write' } });
  const current = new Map(existing.map((r) => [r.id, { state: r.state, lastSeq: Number(r.last_seq) }]));
  const changed = new Set<string>();
  let applied = 0;
  for (const e of events) {
    const before = current.get(e.run_id) ?? { state: initialState, lastSeq: 0 };
    if (e.seq <= before.lastSeq) continue;
    current.set(e.run_id, { state: evolve(before.state, e), lastSeq: e.seq });
    changed.add(e.run_id);
    applied++;
  }
  const rows = [...changed]
    .map((id) => ({ id, ...current.get(id)! }))
    .filter((r) => r.state.request)
    .map((r) => rowOf(r.id, r.state, r.lastSeq));
  if (rows.length > 0) await repo.upsert(rows, ['id']);
  await m
    .getRepository(ProjectionCheckpoint)
    .save({ name: checkpoint, last_seq: String(events[events.length - 1].seq), updated_at: new Date() });
  return applied;
}

/**
 * Writes each run folded from its full history, unless the row already is at least that far; then the
 * checkpoint. Returns the states it folded (by run id), for the caller's reports.
 */
export async function replaceRuns(
  m: EntityManager,
  histories: StoredEvent[][],
  checkpointSeq: number,
  checkpoint = PROJECTOR,
): Promise<Map<string, RunState>> {
  const repo = m.getRepository(ScaffoldRunRow);
  const complete = histories.filter((h) => h.length > 0);
  const existing = await repo.find({
    where: { id: In(complete.map((h) => h[0].run_id)) },
    lock: { mode: 'pessimistic_write' },
  });
  const lastSeqOf = new Map(existing.map((r) => [r.id, Number(r.last_seq)]));
  const folded = complete
    .filter((h) => h[h.length - 1].seq > (lastSeqOf.get(h[0].run_id) ?? 0))
    .map((h) => ({ id: h[0].run_id, state: fold(h), lastSeq: h[h.length - 1].seq }));
  const rows = folded.filter((r) => r.state.request).map((r) => rowOf(r.id, r.state, r.lastSeq));
  if (rows.length > 0) await repo.upsert(rows, ['id']);
  await m
    .getRepository(ProjectionCheckpoint)
    .save({ name: checkpoint, last_seq: String(checkpointSeq), updated_at: new Date() });
  return new Map(folded.map((r) => [r.id, r.state]));
}

/** Applies one event; true when it changed a row. */
export async function applyEvent(
  m: EntityManager,
  event: StoredEvent,
  checkpoint = PROJECTOR,
  table: RunTable = ScaffoldRunRow,
): Promise<boolean> {
  return (await applyEvents(m, [event], checkpoint, table)) > 0;
}
