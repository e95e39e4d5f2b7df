import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { InMemoryEventStore } from '#libs/event-store';
import { stamp } from '#libs/events';
import { loadConfig } from '../config/config';
import type { RunReadModel } from '../projection/run-read-model';
import { CredentialPlanQuery } from './credential-plan-query';
import { RequestChecks } from './request-checks';
import { SCAFFOLD_REQUEST } from '../../test/support/run-fixtures';

/** A run's credential plan is the plan of the reference environment that run used, not the service's default one. */
describe('CredentialPlanQuery', () => {
  const owner = { name: 'team-a', role: 'operator' } as const;
  const config = loadConfig({
    API_KEY: 'unit-test-key-0123456789',
    TEMPLATE_DIR: resolve('test/fixtures/public/onedr0p-cluster-template'),
    // The service's default: an environment this template does not have (its plan is empty).
    REFERENCE_ENV: 'dev',
  });
  const query = (store: InMemoryEventStore) =>
    new CredentialPlanQuery(store, new RequestChecks(config, {} as RunReadModel, undefined));

  /** A run requested by team-a, with the request's reference_env when one is given. */
  async function run(store: InMemoryEventStore, referenceEnv?: string): Promise<string> {
    const runId = randomUUID();
    const data = {
      ...SCAFFOLD_REQUEST,
      requested_by: owner.name,
      ...(referenceEnv ? { reference_env: referenceEnv } : {}),
    };
    await store.append(
      runId,
      [stamp({ type: 'ScaffoldRequested', data } as any, runId, randomUUID(), new Date(), null)],
      0,
    );
    return runId;
  }

  it("reads the plan of the run's own reference_env (kubernetes/main), classes and names only", async () => {
    const store = new InMemoryEventStore();
    const { items } = await query(store).forRun(await run(store, 'kubernetes/main'), owner);
    expect(items).toEqual(
      expect.arrayContaining([
        // The token GitHub signs its webhook calls with is given to GitHub: supplied, never invented (#48).
        { namespace: 'flux-system', name: 'cluster-secrets', key: 'SECRET_WEBHOOK_TOKEN', class: 'supplied' },
        { namespace: 'network', name: 'external-dns-secret', key: 'api-token', class: 'supplied' },
      ]),
    );
    for (const item of items) expect(Object.keys(item).sort()).toEqual(['class', 'key', 'name', 'namespace']);
  });

  it("falls back to the service's reference environment for a run that named none", async () => {
    const store = new InMemoryEventStore();
    expect(await query(store).forRun(await run(store), owner)).toEqual({ items: [] });
  });

  it("answers 404 for another key's run", async () => {
    const store = new InMemoryEventStore();
    const id = await run(store, 'kubernetes/main');
    await expect(query(store).forRun(id, { name: 'team-b', role: 'operator' })).rejects.toMatchObject({ status: 404 });
  });
});
