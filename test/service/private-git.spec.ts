import { makeRsaCert } from '../support/certs';
import { credentialsDir, HttpsGitServer, SshGitServer } from '../support/git-servers';
import { api, RunningService, startService, untilTerminal } from '../support/service';
import { gitLog, TestDatabase, TestNats } from '../support/services';

jest.setTimeout(120_000);

const GIT_PASSWORD = 'PrivateGitPassword-4e4e4e4e';

/**
 * The service (local executor) pushing to private git servers with credentials only from
 * GIT_CREDENTIALS_DIR: HTTPS with Basic auth behind a private CA, and SSH with a key and known_hosts.
 * (Runner Jobs doing the same: test/reliability/secret-hygiene.spec.ts.)
 */
describe('private git servers from the service (EXECUTOR=local)', () => {
  let nats: TestNats;
  let db: TestDatabase;
  let https: HttpsGitServer;
  let ssh: SshGitServer;
  let unknownHost: SshGitServer;
  let svc: RunningService;
  const cert = makeRsaCert();

  beforeAll(async () => {
    nats = await TestNats.start();
    db = await TestDatabase.create();
    https = await HttpsGitServer.start({ username: 'fleet-bot', password: GIT_PASSWORD });
    ssh = await SshGitServer.start();
    unknownHost = await SshGitServer.start();
    const credentials = credentialsDir({
      username: 'fleet-bot',
      password: GIT_PASSWORD,
      'ssh-privatekey': ssh.clientKey,
      known_hosts: `${ssh.knownHostsLine}\n`,
    });
    svc = await startService({
      NATS_URL: nats.url,
      DATABASE_URL: db.url,
      GIT_ALLOWED_SCHEMES: 'https,ssh',
      GIT_CREDENTIALS_DIR: credentials,
      GIT_CREDENTIALS_HOSTS: `127.0.0.1:${https.port}`,
      GIT_CA_FILE: https.tls.caFile,
    });
  });
  afterAll(async () => {
    await svc?.stop();
    for (const s of [https, ssh, unknownHost]) await s?.stop();
    await nats?.destroy();
    await db?.drop();
  });

  const scaffold = async (cluster: string, url: string) => {
    const r = await api(svc.base, 'POST', '/api/v1/scaffolds', {
      cluster_name: cluster,
      domain: `${cluster}.example.com`,
      region: 'eu-west-1',
      acme_email: 'ops@example.com',
      repo: { url, branch: 'main' },
      target: { sealing_cert_pem: cert.certPem },
    });
    expect(r.status).toBe(202);
    const run = await untilTerminal(svc.base, r.json.id);
    const events = (await api(svc.base, 'GET', `/api/v1/scaffolds/${r.json.id}/events`)).json.items;
    const logs = (await api(svc.base, 'GET', `/api/v1/scaffolds/${r.json.id}/logs`)).text;
    expect(JSON.stringify([run, events]) + logs).not.toContain(GIT_PASSWORD);
    return { run, events };
  };

  it.each([
    ['HTTPS (Basic auth, private CA)', () => https.repo()],
    ['SSH (key, known_hosts)', () => ssh.repo()],
  ])('a run over %s succeeds with two commits', async (_what, repo) => {
    const remote = repo();
    const { run } = await scaffold(`priv-${Math.random().toString(36).slice(2, 6)}`, remote.url);
    expect(run.status).toBe('succeeded');
    expect(gitLog(remote.dir)).toHaveLength(3);
  });

  it('an SSH server whose host key is not in known_hosts fails the run at once with ssh reason, not retried', async () => {
    const remote = unknownHost.repo();
    const { run, events } = await scaffold('priv-unknown', remote.url);
    expect(run.status).toBe('failed');
    const failed = events.find((e: any) => e.type === 'StepFailed');
    expect(failed.data.will_retry).toBe(false);
    expect(failed.data.reason).toMatch(
      /^authentication refused: No ED25519 host key is known for \[127\.0\.0\.1\]:\d+ and you have requested strict checking\. Host key verification failed\. fatal: Could not read from remote repository\.$/,
    );
    expect(events.map((e: any) => e.type)).toEqual(['ScaffoldRequested', 'StepFailed', 'ScaffoldFailed']);
    expect(gitLog(remote.dir)).toHaveLength(1);
  });
});
