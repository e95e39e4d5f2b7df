import type { ConsumerMessages } from '@nats-io/jetstream';
import type { DataSource, EntityManager } from 'typeorm';
import type { JetStreamEventStore } from '../../libs/event-store/src';
import { parseEvent, StoredEvent } from '../../libs/events/src';
import { evolve, initialState } from '../../libs/run-decider/src';
import { ProjectionCheckpoint, ScaffoldRunRebuildRow, ScaffoldRunRow } from './entities';

export const PROJECTOR = 'projector';

/** Applies one event to the read-model. The row's last_seq makes a redelivery or replay a no-op. */
export async function applyEvent(
  m: EntityManager,
  event: StoredEvent,
  checkpoint = PROJECTOR,
  table: typeof ScaffoldRunRow | typeof ScaffoldRunRebuildRow = ScaffoldRunRow,
): Promise<boolean> {
  const repo = m.getRepository(table);
  const row = await repo.findOne({ where: { id: event.run_id }, lock: { mode: 'pessimistic_write' } });
  let applied = false;
  if (!row || Number(row.last_seq) < event.seq) {
    const state = evolve(row?.state ?? initialState, event);
    if (state.request) {
      await repo.save({
        id: event.run_id,
        status: state.status,
        step: state.step,
        message: state.message,
        cluster_name: state.request.cluster_name,
        repo_url: state.request.repo_url,
        branch: state.request.branch,
        infra_commit: state.infraCommit,
        full_commit: state.fullCommit,
        created_at: new Date(state.createdAt!),
        updated_at: new Date(state.updatedAt!),
        finished_at: state.finishedAt ? new Date(state.finishedAt) : null,
        last_seq: String(event.seq),
        state,
      });
      applied = true;
    }
  }
  await m.getRepository(ProjectionCheckpoint).save({ name: checkpoint, last_seq: String(event.seq), updated_at: new Date() });
  return applied;
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
  ) {}

  async start() {
    // One message in flight: events of a run must apply in order.
    const consumer = await this.store.durableConsumer(PROJECTOR, { filterSubject: 'scaffold.run.>', ackWaitMs: 30_000, maxAckPending: 1 });
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
