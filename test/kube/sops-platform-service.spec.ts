import { execFileSync } from 'node:child_process';
import { parse } from 'yaml';
import { SHIPPED_SOPS_TEMPLATE } from '#libs/generator';
import { jobNameFor } from '#libs/kube';
import { makeRsaCert } from '../support/certs';
import { FakeKube } from '../support/fake-kube';
import { tempDir } from '../support/files';
import { runJob, runnerAccess } from '../support/runner-job';
import { api, eventCount, RunningService, startService, waitFor } from '../support/service';
import { bareRepo, gitLog, TestDatabase, TestNats } from '../support/services';
import { ageIdentity, sopsOpen } from '../support/sops-open';
import { unsealManifest } from '../support/unseal';

jest.setTimeout(180_000);

const TOKEN = 'CloudflareTokenFromTheManagementCluster-6e6e6e';
const REFERENCE = { TEMPLATE_DIR: SHIPPED_SOPS_TEMPLATE, REFERENCE_ENV: 'dev' };

/**
 * The shipped SOPS-encrypted reference through the service: POST with a credentials_secret, the
 * runner Job (a real process) reading the supplied token from the management cluster at each pass,
 * both backends, both passes, pushed to a real git remote.
 */
describe('service on the shipped sops-platform template (EXECUTOR=kubernetes, credentials_secret)', () => {
  let nats: TestNats;
  let db: TestDatabase;
  let management: FakeKube;
  let target: FakeKube;
  let svc: RunningService;
  const cert = makeRsaCert();

  const runnerEnv = async (id: string) => ({
    ...REFERENCE,
    ...(await runnerAccess(management, id, svc.base)),
    KUBECONFIG: management.kubeconfigFile(),
    WORK_DIR: tempDir('sops-platform-runner'),
    GIT_ALLOWED_SCHEMES: 'https,ssh,file',
    REGISTRY_SERVER: 'registry.shop.example.org',
    REGISTRY_USERNAME: 'svc-puller',
    REGISTRY_PASSWORD: 'ServiceRegistryPassword-2b2b2b',
    SEALED_SECRETS_POLL_INITIAL_MS: '50',
    SEALED_SECRETS_POLL_MAX_MS: '100',
    LOG_LEVEL: 'warn',
  });
  const request = (
    cluster: string,
    repoUrl: string,
    target: Record<string, unknown>,
    extra: Record<string, unknown> = {},
  ) => ({
    cluster_name: cluster,
    domain: `${cluster}.example.com`,
    region: 'eu-west-1',
    acme_email: `ops@${cluster}.example.com`,
    repo: { url: repoUrl, branch: 'main' },
    target,
    credentials_secret: { namespace: 'capi-clusters', name: `${cluster}-credentials` },
    ...extra,
  });

  beforeAll(async () => {
    nats = await TestNats.start();
    db = await TestDatabase.create();
    management = await new FakeKube().start();
    target = await new FakeKube().start();
    svc = await startService({
      ...REFERENCE,
      NATS_URL: nats.url,
      DATABASE_URL: db.url,
      EXECUTOR: 'kubernetes',
      KUBECONFIG: management.kubeconfigFile(),
      JOB_WATCH_INTERVAL_SECONDS: '0.3',
    });
  });
  afterAll(async () => {
    await svc?.stop();
    await management?.stop();
    await target?.stop();
    await nats?.destroy();
    await db?.drop();
  });

  /** POSTs, runs the Job the service created, and waits for the run to succeed. */
  async function scaffold(body: ReturnType<typeof request>) {
    const created = await api(svc.base, 'POST', '/api/v1/scaffolds', body);
    expect(created.status).toBe(202);
    const id = created.json.id;
    await waitFor('the Job', async () => management.jobs.get(`kubeopera-provisioning/${jobNameFor(id)}`));
    const job = await runJob(id, await runnerEnv(id));
    expect(job.output).not.toContain(TOKEN);
    expect(job.code).toBe(0);
    const run = await waitFor('success', async () => {
      const r = await api(svc.base, 'GET', `/api/v1/scaffolds/${id}`);
      return r.json.status === 'succeeded' ? r.json : undefined;
    });
    const events = (await api(svc.base, 'GET', `/api/v1/scaffolds/${id}/events`)).json.items;
    expect(JSON.stringify([run, events])).not.toContain(TOKEN);
    expect(events[0].data.credentials_secret).toEqual(body.credentials_secret);
    return run;
  }

  const show = (dir: string, commit: string, file: string) =>
    parse(execFileSync('git', ['--git-dir', dir, 'show', `${commit}:${file}`], { encoding: 'utf8' }));

  /** The token exactly as supplied wherever it is used; the app's URL carries the new database credentials. */
  function expectConsistent(open: (file: string) => Record<string, string>) {
    expect(open('cert-manager-cloudflare.yaml')['api-token']).toBe(TOKEN);
    expect(open('external-dns-cloudflare.yaml')['api-token']).toBe(TOKEN);
    const pg = open('postgresql-credentials.yaml');
    const url = new URL(open('api-env.yaml').DATABASE_URL);
    expect([decodeURIComponent(url.username), decodeURIComponent(url.password), url.pathname]).toEqual([
      pg.username,
      pg.password,
      '/shop',
    ]);
    expect(pg.password).toMatch(/^[A-Za-z0-9]{40}$/);
  }

  it('refuses at POST, naming the missing key, when the credentials Secret lacks the DNS token; nothing appended', async () => {
    management.putSecret('capi-clusters', 'nokey-credentials', { 'credentials.yaml': 'data/other/api-token: x\n' });
    const before = await eventCount(svc);
    const r = await api(
      svc.base,
      'POST',
      '/api/v1/scaffolds',
      request('nokey', bareRepo().url, { sealing_cert_pem: cert.certPem }),
    );
    expect(r.status).toBe(422);
    expect(r.json.error.message).toContain('cert-manager/cloudflare-api-token/api-token');
    expect(r.text).not.toContain('data/other/api-token: x');
    expect(await eventCount(svc)).toBe(before);
  });

  it('sealed-secrets backend: the Job waits for the new cluster controller, fetches its certificate and seals the supplied token', async () => {
    const remote = bareRepo();
    management.putSecret('capi-clusters', 'sealed-credentials', {
      'credentials.yaml': `cert-manager/cloudflare-api-token/api-token: ${TOKEN}\n`,
    });
    management.putSecret('capi-clusters', 'sealed-kubeconfig', { value: target.kubeconfig() });
    target.installSealedSecrets('helm', cert.certPem);
    const run = await scaffold(
      request('sealed', remote.url, {
        kubeconfig_secret: { namespace: 'capi-clusters', name: 'sealed-kubeconfig', key: 'value' },
      }),
    );
    expect(gitLog(remote.dir)).toHaveLength(3);
    expectConsistent((file) =>
      unsealManifest(cert.privateKeyPem, show(remote.dir, run.full_commit, `clusters/sealed/secrets/${file}`)),
    );
    expect(show(remote.dir, run.full_commit, 'clusters/sealed/secrets.yaml').spec.decryption).toBeUndefined();
    // The infra pass pushed no secret of any kind.
    expect(
      execFileSync('git', ['--git-dir', remote.dir, 'ls-tree', '-r', '--name-only', run.infra_commit], {
        encoding: 'utf8',
      }),
    ).not.toContain('clusters/sealed/secrets/');
  });

  it('SOPS backend: encrypted for the new cluster age key, the token as supplied, decryption pointed at sops-age', async () => {
    const remote = bareRepo();
    const identity = ageIdentity();
    management.putSecret('capi-clusters', 'sops-credentials', {
      'credentials.yaml': JSON.stringify({ 'cert-manager/cloudflare-api-token/api-token': TOKEN }),
    });
    const run = await scaffold(
      request('sops', remote.url, { age_recipients: [identity.recipient] }, { secrets_backend: 'sops' }),
    );
    expectConsistent((file) => {
      const { plain, macOk } = sopsOpen(
        show(remote.dir, run.full_commit, `clusters/sops/secrets/${file}`),
        identity.keyFile,
      );
      expect(macOk).toBe(true);
      return plain.stringData;
    });
    expect(show(remote.dir, run.full_commit, 'clusters/sops/secrets.yaml').spec.decryption).toEqual({
      provider: 'sops',
      secretRef: { name: 'sops-age' },
    });
    const history = execFileSync('git', ['--git-dir', remote.dir, 'log', '-p', '--all'], { encoding: 'utf8' });
    expect(history).not.toContain(TOKEN);
  });
});
