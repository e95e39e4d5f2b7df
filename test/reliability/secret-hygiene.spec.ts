import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { jobNameFor } from '#libs/kube';
import { makeRsaCert } from '../support/certs';
import { dataPlaces, hitsIn } from '../support/data-places';
import { FakeKube } from '../support/fake-kube';
import { tempDir } from '../support/files';
import { credentialsDir, HttpsGitServer, SshGitServer } from '../support/git-servers';
import { runJob, runnerAccess } from '../support/runner-job';
import { SHIPPED_PLANTED, withBase64 } from '../support/planted';
import { bareRepo, TestDatabase, TestNats } from '../support/services';
import { api, API_KEY, waitFor } from '../support/service';
import { ServiceProcess } from '../support/service-process';
import { ageIdentity, sopsOpen } from '../support/sops-open';
import { unsealManifest } from '../support/unseal';

jest.setTimeout(180_000);

const REGISTRY_PASSWORD = 'HygieneRegistryPassword-3c4d5e6f7a';
const GIT_PASSWORD = 'HygieneGitPassword-8d8d8d8d';

/**
 * Runs scaffolds through the real service process and real runner processes (pushing to private HTTPS
 * and SSH git servers with credentials from GIT_CREDENTIALS_DIR, and to a local remote), then scans every place
 * data goes (the three JetStream streams, every PostgreSQL table, the service and runner logs, the
 * whole git history of every target repository) for every credential the run generated or the
 * template planted. Zero hits is the test.
 */
describe('secret hygiene', () => {
  let nats: TestNats;
  let db: TestDatabase;
  let management: FakeKube;
  let target: FakeKube;
  let svc: ServiceProcess;
  const runnerOutput: string[] = [];
  const cert = makeRsaCert();
  const age = ageIdentity();
  // The runs push to a private HTTPS server, a private SSH server and a local remote.
  let https: HttpsGitServer;
  let ssh: SshGitServer;
  let remotes: Array<{ url: string; dir: string }>;
  let gitCredentials: string;

  beforeAll(async () => {
    nats = await TestNats.start();
    db = await TestDatabase.create();
    management = await new FakeKube().start();
    target = await new FakeKube().start();
    target.installSealedSecrets('plain', cert.certPem);
    https = await HttpsGitServer.start({ username: 'hyg-git', password: GIT_PASSWORD });
    ssh = await SshGitServer.start();
    remotes = [https.repo(), ssh.repo(), bareRepo()];
    gitCredentials = credentialsDir({
      username: 'hyg-git',
      password: GIT_PASSWORD,
      'ssh-privatekey': ssh.clientKey,
      known_hosts: ssh.knownHostsLine,
    });
    management.putSecret('capi-clusters', 'hyg-kubeconfig', { value: target.kubeconfig() });
    svc = await ServiceProcess.create({
      NATS_URL: nats.url,
      DATABASE_URL: db.url,
      EXECUTOR: 'kubernetes',
      KUBECONFIG: management.kubeconfigFile(),
      REGISTRY_PASSWORD,
      LOG_LEVEL: 'debug',
    });
    await svc.start();
  });
  afterAll(async () => {
    if (svc.running) await svc.kill('SIGTERM');
    await management.stop();
    await target.stop();
    await https?.stop();
    await ssh?.stop();
    await nats.destroy();
    await db.drop();
  });

  const runnerTokens: string[] = [];
  const runnerEnv = async (id: string) => {
    const access = await runnerAccess(management, id, svc.base);
    runnerTokens.push(readFileSync(access.RUNNER_TOKEN_FILE, 'utf8'));
    return { ...access, ...runnerSettings() };
  };
  const runnerSettings = () => ({
    KUBECONFIG: svc.env.KUBECONFIG,
    WORK_DIR: tempDir('hyg-runner'),
    GIT_ALLOWED_SCHEMES: 'https,ssh,file',
    GIT_CREDENTIALS_DIR: gitCredentials,
    GIT_CREDENTIALS_HOSTS: `127.0.0.1:${https.port}`,
    GIT_CA_FILE: https.tls.caFile,
    REGISTRY_SERVER: 'registry.hygiene.example.com',
    REGISTRY_USERNAME: 'hyg-puller',
    REGISTRY_PASSWORD,
    SEALED_SECRETS_POLL_INITIAL_MS: '50',
    LOG_LEVEL: 'debug',
  });

  it('finds no credential in the streams, the database, the logs or any git history', async () => {
    // Sealed for a given certificate, sealed for a certificate fetched from the cluster, SOPS for an age key.
    const unsealed = (doc: any) => unsealManifest(cert.privateKeyPem, doc);
    const sopsOpened = (doc: any) => sopsOpen(doc, age.keyFile).plain.stringData as Record<string, string>;
    const requests = [
      { patch: { target: { sealing_cert_pem: cert.certPem } }, open: unsealed },
      {
        patch: { target: { kubeconfig_secret: { namespace: 'capi-clusters', name: 'hyg-kubeconfig', key: 'value' } } },
        open: unsealed,
      },
      { patch: { secrets_backend: 'sops', target: { age_recipients: [age.recipient] } }, open: sopsOpened },
    ];
    const ids: string[] = [];
    for (const [i, { patch }] of requests.entries()) {
      const r = await api(svc.base, 'POST', '/api/v1/scaffolds', {
        cluster_name: `hyg-${i}`,
        domain: `hyg${i}.example.com`,
        region: 'eu-west-1',
        acme_email: 'ops@example.com',
        repo: { url: remotes[i].url, branch: 'main' },
        ...patch,
      });
      expect(r.status).toBe(202);
      ids.push(r.json.id);
      await waitFor('the Job', async () => management.jobs.get(`kubeopera-provisioning/${jobNameFor(r.json.id)}`));
      const job = await runJob(r.json.id, await runnerEnv(r.json.id));
      runnerOutput.push(job.output);
      expect(job.code).toBe(0);
      await waitFor('success', async () =>
        (await api(svc.base, 'GET', `/api/v1/scaffolds/${r.json.id}`)).json.status === 'succeeded' ? true : undefined,
      );
      await api(svc.base, 'GET', `/api/v1/scaffolds/${r.json.id}/logs`);
    }

    // A request that tries to hand over a token in the repository URL is refused (400) without echoing it.
    const urlToken = 'ghp_RequestTokenInTheUrl0123456789';
    const withToken = await api(svc.base, 'POST', '/api/v1/scaffolds', {
      cluster_name: 'hyg-token',
      domain: 'hygtoken.example.com',
      region: 'eu-west-1',
      acme_email: 'ops@example.com',
      repo: { url: `https://deploy:${urlToken}@127.0.0.1:${https.port}/fleet.git`, branch: 'main' },
      target: { sealing_cert_pem: cert.certPem },
    });
    expect(withToken.status).toBe(400);
    expect(withToken.text).not.toContain(urlToken);

    // What must never appear: planted, configured and generated credentials.
    const generated: string[] = [];
    for (const [i, remote] of remotes.entries()) {
      for (const file of [
        'apps/registry-credentials.yaml',
        'database/postgresql-credentials.yaml',
        'database/rabbitmq-credentials.yaml',
      ]) {
        const text = execFileSync('git', ['--git-dir', remote.dir, 'show', `main:clusters/hyg-${i}/${file}`], {
          encoding: 'utf8',
        });
        for (const doc of parseAllDocuments(text)) {
          for (const [key, value] of Object.entries(requests[i].open(doc.toJS())))
            if (key !== 'database') generated.push(value);
        }
      }
    }
    expect(generated.length).toBeGreaterThanOrEqual(21);
    const forbidden = [
      ...withBase64([
        ...SHIPPED_PLANTED,
        REGISTRY_PASSWORD,
        GIT_PASSWORD,
        API_KEY,
        target.token,
        management.token,
        urlToken,
        ...runnerTokens,
      ]),
      // The SSH key's body lines (the first is the same for every ed25519 key: skipped).
      ...ssh.clientKey.split('\n').slice(2, -2),
      ...generated,
      cert.privateKeyPem.split('\n')[1],
      readFileSync(age.keyFile, 'utf8').match(/AGE-SECRET-KEY-[0-9A-Z]+/)![0],
    ];

    // Where data went.
    const places = await dataPlaces(nats.url, db.url);
    places['service log'] = svc.output;
    places['runner logs'] = runnerOutput.join('');
    for (const [i, remote] of remotes.entries()) {
      places[`git history ${i}`] = execFileSync(
        'git',
        ['--git-dir', remote.dir, 'cat-file', '--batch-all-objects', '--batch'],
        { encoding: 'latin1', maxBuffer: 256 * 1024 * 1024 },
      );
    }
    expect(places['stream SCAFFOLD_EVENTS'].length).toBeGreaterThan(1000);
    expect(places['service log'].length).toBeGreaterThan(500);
    expect(places['runner logs'].length).toBeGreaterThan(500);

    // The scan sees what it should: run ids and the registry user name are in these places.
    expect(places['stream SCAFFOLD_EVENTS']).toContain(ids[1]);
    expect(places['runner logs']).toContain(ids[0]);
    const hits = hitsIn(places, forbidden);
    expect(hits).toEqual([]);
  });
});
