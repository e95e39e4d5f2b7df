import { parseAllDocuments } from 'yaml';
import { execFileSync } from 'node:child_process';
import { jobNameFor, RUN_ID_LABEL } from '#libs/kube';
import { parseSealingCertificate } from '#libs/sealing';
import { makeRsaCert } from '../support/certs';
import { FakeKube } from '../support/fake-kube';
import { tempDir } from '../support/files';
import { runJob, runnerAccess } from '../support/runner-job';
import { bareRepo, gitLog, TestDatabase, TestNats } from '../support/services';
import { api, RunningService, startService, waitFor } from '../support/service';
import { unsealManifest } from '../support/unseal';
import { SUCCEEDED_RUN_EVENTS } from '../support/run-fixtures';

jest.setTimeout(120_000);

describe('EXECUTOR=kubernetes: Jobs, the runner, the watcher (test API servers, real NATS/PostgreSQL/git)', () => {
  let nats: TestNats;
  let db: TestDatabase;
  let management: FakeKube;
  let target: FakeKube;
  let svc: RunningService;
  const cert = makeRsaCert();
  const remote = bareRepo();
  let kubeconfigFile: string;
  const body = (cluster: string) => ({
    cluster_name: cluster,
    domain: `${cluster}.example.com`,
    region: 'eu-west-1',
    acme_email: 'ops@example.com',
    repo: { url: remote.url, branch: 'main' },
    target: { kubeconfig_secret: { namespace: 'capi-clusters', name: `${cluster}-kubeconfig`, key: 'value' } },
  });
  const runnerEnv = async (id: string) => ({
    ...(await runnerAccess(management, id, svc.base)),
    KUBECONFIG: kubeconfigFile,
    WORK_DIR: tempDir('runner-work'),
    GIT_ALLOWED_SCHEMES: 'https,ssh,file',
    REGISTRY_SERVER: 'registry.test.example.com',
    REGISTRY_USERNAME: 'job-puller',
    REGISTRY_PASSWORD: 'JobRegistryPassword-0a1b2c3d4e',
    SEALED_SECRETS_POLL_INITIAL_MS: '50',
    SEALED_SECRETS_POLL_MAX_MS: '100',
    LOG_LEVEL: 'warn',
  });

  beforeAll(async () => {
    nats = await TestNats.start();
    db = await TestDatabase.create();
    management = await new FakeKube().start();
    target = await new FakeKube().start();
    kubeconfigFile = management.kubeconfigFile();
    svc = await startService({
      NATS_URL: nats.url,
      DATABASE_URL: db.url,
      EXECUTOR: 'kubernetes',
      KUBECONFIG: kubeconfigFile,
      JOB_WATCH_INTERVAL_SECONDS: '0.3',
      JOB_MISSING_GRACE_SECONDS: '1',
    });
  });
  afterAll(async () => {
    await svc?.stop();
    await management.stop();
    await target.stop();
    await nats.destroy();
    await db.drop();
  });

  it('creates the Job; the runner waits for the Helm-installed controller, fetches its cert and pushes both passes', async () => {
    management.putSecret('capi-clusters', 'omega-kubeconfig', { value: target.kubeconfig() });
    target.installSealedSecrets('helm', cert.certPem, { availableAfterPolls: 3 });
    const created = await api(svc.base, 'POST', '/api/v1/scaffolds', body('omega'));
    expect(created.status).toBe(202);
    const id = created.json.id;
    const job = await waitFor('the Job', async () => management.jobs.get(`kubeopera-provisioning/${jobNameFor(id)}`));
    expect(job.metadata.labels[RUN_ID_LABEL]).toBe(id);

    const run = await runJob(id, await runnerEnv(id));
    expect(run.code).toBe(0);
    const done = await waitFor('success', async () => {
      const r = await api(svc.base, 'GET', `/api/v1/scaffolds/${id}`);
      return r.json.status === 'succeeded' ? r.json : undefined;
    });
    expect(gitLog(remote.dir)).toHaveLength(3);
    const all = (await api(svc.base, 'GET', `/api/v1/scaffolds/${id}/events`)).json.items;
    // The wait reported its progress whenever what it saw changed: not found, then not yet Available.
    const progress = all.filter((e: any) => e.type === 'StepProgress');
    expect(progress[0].data.seen).toBe(
      'sealed-secrets-controller: not found; sealed-secrets: Available=False (MinimumReplicasUnavailable), observedGeneration 1/2',
    );
    expect(progress[progress.length - 1].data.seen).toBe(
      'sealed-secrets: Available=True (MinimumReplicasAvailable), observedGeneration 2/2',
    );
    expect(progress.every((e: any) => e.data.step === 'sealed-secrets-wait' && e.data.deadline_ms === 1_200_000)).toBe(
      true,
    );
    const events = all.filter((e: any) => e.type !== 'StepProgress');
    expect(events.map((e: any) => e.type)).toEqual(SUCCEEDED_RUN_EVENTS);
    expect(done.progress).toBeNull();
    expect(events[0].data.target).toEqual({
      kind: 'kubeconfig_secret',
      namespace: 'capi-clusters',
      name: 'omega-kubeconfig',
      key: 'value',
    });
    expect(events[2].data).toEqual({
      source: 'cluster',
      controller: { namespace: 'kube-system', name: 'sealed-secrets' },
    });
    expect(events[3].data.fingerprint_sha256).toBe(parseSealingCertificate(cert.certPem).fingerprintSha256);
    expect(JSON.stringify(events)).not.toContain(target.token);
    // The full pass is sealed for the fetched certificate: the private key opens it.
    const sealed = parseAllDocuments(
      execFileSync(
        'git',
        ['--git-dir', remote.dir, 'show', `${done.full_commit}:clusters/omega/database/postgresql-credentials.yaml`],
        { encoding: 'utf8' },
      ),
    )[0].toJS();
    expect(unsealManifest(cert.privateKeyPem, sealed).password).toHaveLength(40);
    // The wait was visible in the run's log; the runner made no consumer (it has no NATS login).
    const logs = await api(svc.base, 'GET', `/api/v1/scaffolds/${id}/logs`);
    expect(logs.text).toMatch(
      /waiting for sealed-secrets \(\d+ s of 1200 s\): sealed-secrets-controller: not found; sealed-secrets: Available=False/,
    );
    expect(logs.text).not.toContain(target.token);
    const consumers = await svc.runtime.store.jsm.consumers.list('SCAFFOLD_EVENTS').next();
    expect(consumers.map((c) => c.name).filter((n) => n.includes(id))).toEqual([]);
  });

  it('fails a run whose Job failed, with the Job condition and the pod log tail; the logs endpoint shows the pod log', async () => {
    const created = await api(svc.base, 'POST', '/api/v1/scaffolds', body('sigma'));
    const id = created.json.id;
    const job = await waitFor('the Job', async () => management.jobs.get(`kubeopera-provisioning/${jobNameFor(id)}`));
    management.pods.set(`kubeopera-provisioning/${jobNameFor(id)}-x1`, {
      metadata: { name: `${jobNameFor(id)}-x1`, namespace: 'kubeopera-provisioning', labels: { [RUN_ID_LABEL]: id } },
      spec: { containers: [{ name: 'runner' }] },
      status: { containerStatuses: [{ name: 'runner', restartCount: 0 }] },
    });
    management.podLogs.set(`kubeopera-provisioning/${jobNameFor(id)}-x1/runner`, 'starting\nError: out of memory\n');
    job.status = { failed: 3, conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }] };
    const failed = await waitFor('failure', async () => {
      const r = await api(svc.base, 'GET', `/api/v1/scaffolds/${id}`);
      return r.json.status === 'failed' ? r.json : undefined;
    });
    expect(failed.message).toMatch(/Job condition Failed: BackoffLimitExceeded; last log lines:/);
    expect(failed.message).toContain('Error: out of memory');
    const logs = await api(svc.base, 'GET', `/api/v1/scaffolds/${id}/logs`);
    expect(logs.text).toContain(`--- pod ${jobNameFor(id)}-x1 container runner ---\nstarting\nError: out of memory`);
  });

  it('fails a run whose Job disappeared', async () => {
    const created = await api(svc.base, 'POST', '/api/v1/scaffolds', body('tau'));
    const id = created.json.id;
    await waitFor('the Job', async () => management.jobs.get(`kubeopera-provisioning/${jobNameFor(id)}`));
    management.jobs.delete(`kubeopera-provisioning/${jobNameFor(id)}`);
    const failed = await waitFor('failure', async () => {
      const r = await api(svc.base, 'GET', `/api/v1/scaffolds/${id}`);
      return r.json.status === 'failed' ? r.json : undefined;
    });
    expect(failed.message).toBe(`infra-pass failed: Job scaffold-${id} disappeared before the run finished`);
  });

  it("keeps a run whose Job lost its labels (the watcher's list misses it, the read by name finds it)", async () => {
    const created = await api(svc.base, 'POST', '/api/v1/scaffolds', body('phi'));
    const id = created.json.id;
    const job = await waitFor('the Job', async () => management.jobs.get(`kubeopera-provisioning/${jobNameFor(id)}`));
    job.metadata.labels = {};
    management.requests.length = 0;
    // Past the missing-Job grace (1 s) and several watch intervals (0.3 s), with the watcher reading the Job by name.
    await waitFor('a read of the Job by name', async () =>
      management.requests.some((r) => r.path.endsWith(`/jobs/${jobNameFor(id)}`)) ? true : undefined,
    );
    await new Promise((r) => setTimeout(r, 1500));
    expect((await api(svc.base, 'GET', `/api/v1/scaffolds/${id}`)).json.status).not.toBe('failed');
    await api(svc.base, 'POST', `/api/v1/scaffolds/${id}/cancel`, {});
  });

  it('validates the kubeconfig Secret reference', async () => {
    const bad = await api(svc.base, 'POST', '/api/v1/scaffolds', {
      ...body('upsilon'),
      target: { kubeconfig_secret: { namespace: 'Bad NS', name: 'x', key: 'value' } },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toMatch(/^target.kubeconfig_secret.namespace:/);
  });
});
