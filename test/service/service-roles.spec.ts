import { jobNameFor, RUN_ID_LABEL } from '#libs/kube';
import { makeRsaCert } from '../support/certs';
import { FakeKube } from '../support/fake-kube';
import { tempDir } from '../support/files';
import { createBody, SUCCEEDED_RUN_EVENTS } from '../support/run-fixtures';
import { api, natsApi, untilTerminal, waitFor } from '../support/service';
import { ServiceProcess } from '../support/service-process';
import { bareRepo, runCommits, TestDatabase, TestNats } from '../support/services';

jest.setTimeout(180_000);

/** How many events a replica projected (its projection-delay histogram's count; absent where it does not project). */
async function projected(replica: ServiceProcess): Promise<number> {
  const text = await (await fetch(`${replica.base}/metrics`)).text();
  return Number(/^scaffold_projection_delay_seconds_count (\d+)/m.exec(text)?.[1] ?? 0);
}

/**
 * An API replica and a worker replica (real processes) over a NATS server and a database of their own, for the
 * describe block that calls it; `env` adds settings both share (read once the block's earlier fixtures exist).
 */
function splitReplicas(env: () => Record<string, string> = () => ({})) {
  const replicas = {} as { nats: TestNats; db: TestDatabase; api: ServiceProcess; worker: ServiceProcess };
  beforeAll(async () => {
    replicas.nats = await TestNats.start();
    replicas.db = await TestDatabase.create();
    const shared = { NATS_URL: replicas.nats.url, DATABASE_URL: replicas.db.url, LOG_LEVEL: 'warn', ...env() };
    replicas.worker = await ServiceProcess.create({ ...shared, SERVICE_ROLE: 'worker' });
    replicas.api = await ServiceProcess.create({ ...shared, SERVICE_ROLE: 'api', WORK_DIR: tempDir('api-work') });
    await replicas.worker.start();
    await replicas.api.start();
  });
  afterAll(async () => {
    for (const replica of [replicas.api, replicas.worker]) if (replica?.running) await replica.kill('SIGTERM');
    await replicas.nats?.destroy();
    await replicas.db?.drop();
  });
  return replicas;
}

describe('SERVICE_ROLE: an API replica answers the controller, a worker replica does the runs (real processes)', () => {
  const replicas = splitReplicas();
  const cert = makeRsaCert();

  it('a run created on the API replica is done by the worker and read back from the API replica', async () => {
    const remote = bareRepo();
    const created = await api(
      replicas.api.base,
      'POST',
      '/api/v1/scaffolds',
      createBody('roles', remote.url, cert.certPem),
    );
    expect(created.status).toBe(202);
    const id = created.json.id as string;

    const done = await untilTerminal(replicas.api.base, id, 120_000);

    expect(done.status).toBe('succeeded');
    expect(runCommits(remote.dir, id).sort()).toEqual(['full', 'infra']);
    const events = (await api(replicas.api.base, 'GET', `/api/v1/scaffolds/${id}/events`)).json.items;
    expect(events.map((e: any) => e.type).filter((t: string) => t !== 'StepProgress')).toEqual(SUCCEEDED_RUN_EVENTS);
    // The worker alone projected: the API replica's event loop carries none of it.
    expect(await projected(replicas.worker)).toBeGreaterThanOrEqual(SUCCEEDED_RUN_EVENTS.length);
    expect(await projected(replicas.api)).toBe(0);
  });

  it('the worker has no public API (REST, console, NATS) and the API replica no runner API; both report health', async () => {
    for (const path of ['/api/v1/scaffolds', '/ui/'])
      expect((await api(replicas.worker.base, 'GET', path)).status).toBe(404);
    expect(
      (await api(replicas.api.base, 'GET', '/api/runner/v1/runs/00000000-0000-4000-8000-000000000000/events')).status,
    ).toBe(404);
    for (const replica of [replicas.worker, replicas.api])
      expect((await fetch(`${replica.base}/health`)).status).toBe(200);

    const nc = await natsApi(replicas.nats.url);
    try {
      expect((await nc.request('scaffolds.v1.list', {})).status).toBe(200);
      // With the API replica gone, nobody in the API's queue group answers: the worker never subscribed.
      await replicas.api.kill('SIGTERM');
      await expect(nc.request('scaffolds.v1.list', {})).rejects.toThrow(/no responders|503/i);
    } finally {
      await nc.close();
    }
  });
});

describe("SERVICE_ROLE with EXECUTOR=kubernetes: the worker launches the Jobs, the API replica shows their pods' logs", () => {
  let management: FakeKube;
  beforeAll(async () => {
    management = await new FakeKube().start();
  });
  afterAll(() => management.stop());
  const replicas = splitReplicas(() => ({
    EXECUTOR: 'kubernetes',
    KUBECONFIG: management.kubeconfigFile(),
    JOB_WATCH_INTERVAL_SECONDS: '0.3',
  }));
  const cert = makeRsaCert();

  it('a run created on the API replica gets its Job from the worker; its failure and pod log are read on the API replica', async () => {
    const created = await api(
      replicas.api.base,
      'POST',
      '/api/v1/scaffolds',
      createBody('roles-k', bareRepo().url, cert.certPem),
    );
    expect(created.status).toBe(202);
    const id = created.json.id as string;
    const job = await waitFor('the Job', async () => management.jobs.get(`kubeopera-provisioning/${jobNameFor(id)}`));
    const pod = `${jobNameFor(id)}-x1`;
    management.pods.set(`kubeopera-provisioning/${pod}`, {
      metadata: { name: pod, namespace: 'kubeopera-provisioning', labels: { [RUN_ID_LABEL]: id } },
      spec: { containers: [{ name: 'runner' }] },
      status: { containerStatuses: [{ name: 'runner', restartCount: 0 }] },
    });
    management.podLogs.set(`kubeopera-provisioning/${pod}/runner`, 'starting\nError: out of memory\n');
    job.status = { failed: 3, conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }] };

    const failed = await untilTerminal(replicas.api.base, id);

    expect(failed.status).toBe('failed');
    expect(failed.message).toMatch(/Job condition Failed: BackoffLimitExceeded/);
    const logs = await api(replicas.api.base, 'GET', `/api/v1/scaffolds/${id}/logs`);
    expect(logs.text).toContain(`--- pod ${pod} container runner ---\nstarting\nError: out of memory`);
  });
});
