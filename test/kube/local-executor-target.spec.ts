import { execFileSync } from 'node:child_process';
import { parse } from 'yaml';
import { makeRsaCert } from '../support/certs';
import { FakeKube } from '../support/fake-kube';
import { api, RunningService, startService, untilTerminal } from '../support/service';
import { bareRepo, gitLog, TestDatabase, TestNats } from '../support/services';
import { unsealManifest } from '../support/unseal';
import { createBody, SUCCEEDED_RUN_EVENTS } from '../support/run-fixtures';

jest.setTimeout(120_000);

/**
 * target.kubeconfig_secret with EXECUTOR=local: the service itself reads the kubeconfig Secret from
 * the management cluster (KUBECONFIG), waits for the target's sealed-secrets controller and fetches its
 * certificate through the service proxy, with the same code the runner Jobs use.
 */
describe('EXECUTOR=local with a kubeconfig_secret target (test API servers, real NATS/PostgreSQL/git)', () => {
  let nats: TestNats;
  let db: TestDatabase;
  let management: FakeKube;
  const targets: FakeKube[] = [];
  let svc: RunningService;

  beforeAll(async () => {
    nats = await TestNats.start();
    db = await TestDatabase.create();
    management = await new FakeKube().start();
    svc = await startService({
      NATS_URL: nats.url,
      DATABASE_URL: db.url,
      EXECUTOR: 'local',
      KUBECONFIG: management.kubeconfigFile(),
      SEALED_SECRETS_POLL_INITIAL_MS: '50',
      SEALED_SECRETS_POLL_MAX_MS: '100',
    });
  });
  afterAll(async () => {
    await svc?.stop();
    for (const t of [management, ...targets]) await t?.stop();
    await nats?.destroy();
    await db?.drop();
  });

  it('previews the infra pass, and the full pass that follows rehearsed, without reading the target', async () => {
    const remote = bareRepo();
    const r = await api(svc.base, 'POST', '/api/v1/scaffolds/preview', {
      ...createBody('local-preview', remote.url, ''),
      target: { kubeconfig_secret: { namespace: 'capi-clusters', name: 'local-preview-kubeconfig', key: 'value' } },
    });
    expect([r.status, r.json.error?.message]).toEqual([200, undefined]);
    expect(r.json.pass).toBe('infra');
    expect(r.json.note).toMatch(/rehearsed with a throwaway one/);
    expect(r.json.full_pass_summary).toMatchObject({ pass: 'full', cluster_name: 'local-preview' });
    expect(r.json.full_pass_summary.objects_sealed.map((o: any) => o.name)).toContain('postgresql-credentials');
    // Its files are the later pass's: the infra pass's changes hold no credential of any kind.
    expect(r.json.changes.some((c: any) => c.path.includes('/database/'))).toBe(false);
    expect(r.text).not.toMatch(/Ag[A-Za-z0-9+/]{100}/);
    expect(gitLog(remote.dir)).toHaveLength(1);
  });

  it.each([
    ['plain controller.yaml', 'plain' as const, 'sealed-secrets-controller'],
    ['Helm chart', 'helm' as const, 'sealed-secrets'],
  ])('seals for the certificate of a %s install, fetched by the service', async (_what, shape, controller) => {
    const cluster = `local-${shape}`;
    const target = await new FakeKube().start();
    targets.push(target);
    const cert = makeRsaCert();
    target.installSealedSecrets(shape, cert.certPem, { availableAfterPolls: 2 });
    management.putSecret('capi-clusters', `${cluster}-kubeconfig`, { value: target.kubeconfig() });
    const remote = bareRepo();
    const created = await api(svc.base, 'POST', '/api/v1/scaffolds', {
      cluster_name: cluster,
      domain: `${cluster}.example.com`,
      region: 'eu-west-1',
      acme_email: 'ops@example.com',
      repo: { url: remote.url, branch: 'main' },
      target: { kubeconfig_secret: { namespace: 'capi-clusters', name: `${cluster}-kubeconfig`, key: 'value' } },
    });
    expect(created.status).toBe(202);
    const run = await untilTerminal(svc.base, created.json.id);
    expect(run.status).toBe('succeeded');
    const events = (await api(svc.base, 'GET', `/api/v1/scaffolds/${created.json.id}/events`)).json.items.filter(
      (e: any) => e.type !== 'StepProgress',
    );
    expect(events.map((e: any) => e.type)).toEqual(SUCCEEDED_RUN_EVENTS);
    expect(events[2].data.controller).toEqual({ namespace: 'kube-system', name: controller });
    expect(gitLog(remote.dir)).toHaveLength(3);
    const sealed = parse(
      execFileSync(
        'git',
        [
          '--git-dir',
          remote.dir,
          'show',
          `${run.full_commit}:clusters/${cluster}/database/postgresql-credentials.yaml`,
        ],
        { encoding: 'utf8' },
      ),
    );
    expect(unsealManifest(cert.privateKeyPem, sealed).password).toMatch(/^[A-Za-z0-9]{40}$/);
    expect(JSON.stringify(events)).not.toContain(target.token);
  });
});
