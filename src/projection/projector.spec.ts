import { randomUUID } from 'node:crypto';
import type { FindOperator } from 'typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { Delivery, InMemoryEventStore, JetStreamEventStore } from '#libs/event-store';
import { RunCommands } from '#libs/run-decider';
import { loadConfig } from '../config/config';
import { Metrics } from '../metrics/metrics';
import { ProjectionCheckpoint, ScaffoldRunRow } from './entities';
import { Projector } from './projector';
import { SCAFFOLD_REQUEST } from '../../test/support/run-fixtures';

/** Tables as maps, with the three repository calls the projection makes. */
function memoryTables() {
  const tables = new Map<unknown, Map<string, any>>();
  const table = (entity: unknown) => tables.get(entity) ?? tables.set(entity, new Map()).get(entity)!;
  const manager = {
    getRepository: (entity: unknown) => ({
      find: async ({ where }: { where: { id: FindOperator<string[]> } }) =>
        (where.id.value as unknown as string[]).map((id) => table(entity).get(id)).filter(Boolean),
      upsert: async (rows: any[]) => rows.forEach((r) => table(entity).set(r.id, r)),
      save: async (row: any) => table(entity).set(row.name, row),
    }),
  } as unknown as EntityManager;
  const ds = { transaction: (work: (m: EntityManager) => Promise<unknown>) => work(manager) } as unknown as DataSource;
  return {
    ds,
    rows: () => table(ScaffoldRunRow),
    checkpoint: () => table(ProjectionCheckpoint).get('projector')?.last_seq,
  };
}

const request = SCAFFOLD_REQUEST;
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined } as any;

/** The projection on the in-memory store: given events, when a batch is projected, then rows and the checkpoint. */
describe('Projector (in-memory event store, in-memory tables)', () => {
  it('writes each touched run folded from its whole history, whatever the batch order, and the checkpoint', async () => {
    const store = new InMemoryEventStore();
    const db = memoryTables();
    const projector = new Projector(
      store,
      db.ds,
      new Metrics({} as JetStreamEventStore),
      silent,
      loadConfig({}, { requireApiKey: false }),
    );
    const [a, b] = [randomUUID(), randomUUID()];
    for (const id of [a, b]) await new RunCommands(store).handle(id, { type: 'RequestScaffold', data: request });
    await new RunCommands(store).handle(a, { type: 'RequestCancel', requestedBy: 'ops' });
    const all = (await store.readRange({ fromSeq: 1, limit: 100 })).events;
    // A redelivered older event after a newer one: the row still reflects the whole history.
    const batch: Delivery[] = [all[2], all[0], all[1]].map((event) => ({ event, deliveryCount: 1 }));
    expect(await projector.project(batch)).toEqual({ ack: true });
    expect(db.rows().get(a)).toMatchObject({ status: 'queued', last_seq: '3', cluster_name: 'c1' });
    expect(db.rows().get(a).state.cancelRequested).toBe(true);
    expect(db.rows().get(b)).toMatchObject({ status: 'queued', last_seq: '2' });
    expect(db.checkpoint()).toBe('3');
    // The same batch again changes nothing.
    const before = JSON.stringify([...db.rows().values()]);
    await projector.project(batch);
    expect(JSON.stringify([...db.rows().values()])).toBe(before);
  });
});
