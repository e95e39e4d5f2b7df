import type { ConsumerMessages } from '@nats-io/jetstream';
import type { DataSource, EntityManager } from 'typeorm';
import type { JetStreamEventStore } from '../../libs/event-store/src';
import { parseEvent, StoredEvent } from '../../libs/events/src';
import { evolve, initialState, RunState } from '../../libs/run-decider/src';
import { In } from 'typeorm';
import { ProjectionCheckpoint, ScaffoldRunRebuildRow, ScaffoldRunRow } from './entities';

export const PROJECTOR = 'projector';

type RunTable = typeof ScaffoldRunRow | typeof ScaffoldRunRebuildRow;

function rowOf(id: string, state: RunState, lastSeq: number) {
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
export async function applyEvents(m: EntityManager, events: StoredEvent[], checkpoint = PROJECTOR, table: RunTable = ScaffoldRunRow): Promise<number> {
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
  const rows = [...changed].map((id) => ({ id, ...current.get(id)! })).filter((r) => r.state.request).map((r) => rowOf(r.id, r.state, r.lastSeq));
  if (rows.length > 0) await repo.upsert(rows, ['id']);
  await m.getRepository(ProjectionCheckpoint).save({ name: checkpoint, last_seq: String(events[events.length - 1].seq), updated_at: new Date() });
  return applied;
}

/** Applies one event; true when it changed a row. */
export async function applyEvent(m: EntityManager, event: StoredEvent, checkpoint = PROJECTOR, table: RunTable = ScaffoldRunRow): Promise<boolean> {
  return (await applyEvents(m, [event], checkpoint, table)) > 0;
}

/**
 * The read-model projection: a durable consumer over every event, one at a time (order matters),
 * each event applied with its checkpoint in one PostgreSQL transaction. While PostgreSQL is down
 * the message is nak'ed and comes back; nothing is lost and nothing applies twice.
 */
export class Projector {
  private messages?: ConsumerMessages;
  private loop?: Promise<void>;
  lastAppliedSeq = 0;

  constructor(
    private readonly store: JetStreamEventStore,
    private readonly ds: DataSource,
    private readonly onError: (e: unknown) => void = () => undefined,
    private readonly onProjected: (e: StoredEvent) => void = () => undefined,
    /** Short: a message held by a process that died comes back after this, and the read-model waits for it. */
    private readonly ackWaitMs = 10_000,
  ) {}

  async start() {
    // One message in flight: events of a run must apply in order.
    const consumer = await this.store.durableConsumer(PROJECTOR, { filterSubject: 'scaffold.run.>', ackWaitMs: this.ackWaitMs, maxAckPending: 1 });
    this.messages = await consumer.consume({ max_messages: 64 });
    this.loop = (async () => {
      for await (const msg of this.messages!) {
        let event: StoredEvent;
        try {
          event = parseEvent(msg.string(), msg.seq);
        } catch (e) {
          this.onError(e);
          msg.ack(); // not a scaffold event: nothing to project, and retrying cannot change that
          continue;
        }
        try {
          await this.ds.transaction((m) => applyEvent(m, event));
          this.lastAppliedSeq = msg.seq;
          this.onProjected(event);
          msg.ack();
        } catch (e) {
          this.onError(e);
          msg.nak(1000);
        }
      }
    })();
  }

  async stop() {
    await this.messages?.close().catch(() => undefined);
    await this.loop?.catch(() => undefined);
  }
}
