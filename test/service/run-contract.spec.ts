import { execFileSync } from 'node:child_process';
import { cpSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { SHIPPED_TEMPLATE } from '#libs/generator';
import { makeRsaCert } from '../support/certs';
import { tempDir } from '../support/files';
import { api, eventCount, natsApi, untilTerminal, waitFor } from '../support/service';
import { useServiceStack } from '../support/service-stack';
import { bareRepo, gitLog } from '../support/services';

jest.setTimeout(120_000);

const cert = makeRsaCert();
const body = (cluster: string, repo: Record<string, string>) => ({
  cluster_name: cluster,
  domain: `${cluster}.example.com`,
  region: 'eu-west-1',
  acme_email: 'ops@example.com',
  repo: { branch: 'main', ...repo },
  target: { sealing_cert_pem: cert.certPem },
});
const gitRepositoryUrl = (gitDir: string, cluster: string) => {
  const text = execFileSync(
    'git',
    ['--git-dir', gitDir, 'show', `main:clusters/${cluster}/flux-system/gotk-sync.yaml`],
    { encoding: 'utf8' },
  );
  return parseAllDocuments(text)
    .map((d) => d.toJS())
    .find((o) => o.kind === 'GitRepository').spec.url;
};

/** A reference repository that is also the target: a bare repository holding the shipped template, and its clone as TEMPLATE_DIR. */
function referenceRepository(): { url: string; dir: string; clone: string } {
  const remote = bareRepo();
  const clone = tempDir('reference-clone');
  execFileSync('git', ['clone', '-q', remote.dir, clone]);
  cpSync(SHIPPED_TEMPLATE, clone, { recursive: true });
  const g = (...a: string[]) =>
    execFileSync('git', ['-C', clone, '-c', 'user.name=t', '-c', 'user.email=t@x', ...a], { stdio: 'ignore' });
  g('add', '.');
  g('commit', '-m', 'the platform reference');
  g('push', 'origin', 'HEAD:main');
  return { ...remote, clone };
}

/** The run's contract with its caller, each point over REST and over NATS. */
describe('the run contract (REST and NATS)', () => {
  const reference = referenceRepository();
  const stack = useServiceStack(() => ({ TEMPLATE_DIR: reference.clone }));
  let nats: Awaited<ReturnType<typeof natsApi>>;
  beforeAll(async () => {
    nats = await natsApi(stack.nats.url);
  });
  afterAll(() => nats?.close());

  it('re-scaffolding an unchanged cluster pushes no commit; the log ends with how the run ended', async () => {
    const remote = bareRepo();
    const first = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', body('same', { url: remote.url }));
    expect((await untilTerminal(stack.svc.base, first.json.id)).status).toBe('succeeded');
    expect(gitLog(remote.dir)).toHaveLength(3);
    const again = await nats.request('scaffolds.v1.create', body('same', { url: remote.url }));
    expect(again.json.status).toBe('queued');
    const run = await untilTerminal(stack.svc.base, again.json.id);
    expect(run.status).toBe('succeeded');
    expect(gitLog(remote.dir)).toHaveLength(3);
    const events = (await nats.request('scaffolds.v1.events', { id: run.id })).json.items;
    expect(events.find((e: any) => e.type === 'InfraPushed').data).toMatchObject({ files_changed: 0, unchanged: true });
    expect(events.find((e: any) => e.type === 'FullPushed').data).toMatchObject({ unchanged: true });
    for (const log of [
      (await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${run.id}/logs`)).text,
      (await nats.request('scaffolds.v1.logs', { id: run.id })).json.log,
    ]) {
      expect(log).toContain('full pass changed nothing; main already holds this tree');
      expect(log.trimEnd().split('\n').at(-1)).toMatch(
        /^\S+ INFO \[run\] run succeeded: nothing pushed: the branch already held both trees \(infra [0-9a-f]{12}, full [0-9a-f]{12}\)$/,
      );
    }
  });

  it('says retrying, with the step, the failed attempt and the reason, while a step is retried', async () => {
    // Nothing listens on port 9: connection refused is worth another try.
    const created = await nats.request('scaffolds.v1.create', body('flaky', { url: 'https://127.0.0.1:9/fleet.git' }));
    const id = created.json.id;
    const rest = await waitFor('retrying', async () => {
      const r = await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${id}`);
      return r.json.status === 'retrying' ? r.json : undefined;
    });
    expect(rest.retry).toMatchObject({ step: 'infra-pass', failed_attempt: expect.any(Number) });
    expect(rest.retry.reason).toMatch(/^git failed: .*Failed to connect to 127\.0\.0\.1 port 9/);
    const overNats = (await nats.request('scaffolds.v1.get', { id })).json;
    expect(overNats.status).toBe('retrying');
    expect(
      (await api(stack.svc.base, 'GET', '/api/v1/scaffolds?status=retrying')).json.items.map((r: any) => r.id),
    ).toContain(id);
    // A retried step's run still counts as active: a second run for the cluster waits.
    expect(
      (await api(stack.svc.base, 'POST', '/api/v1/scaffolds', body('flaky', { url: 'https://127.0.0.1:9/fleet.git' })))
        .status,
    ).toBe(409);
    await api(stack.svc.base, 'POST', `/api/v1/scaffolds/${id}/cancel`);
    const done = await untilTerminal(stack.svc.base, id, 90_000);
    expect(done).toMatchObject({ status: 'cancelled', retry: null });
    expect(
      (await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${id}/logs`)).text.trimEnd().split('\n').at(-1),
    ).toMatch(/WARN \[run\] run cancelled: cancelled$/);
  });

  it("writes the Flux URL: repo.flux_url when given, the reference's own URL when the target is the reference repository, else the target", async () => {
    const other = bareRepo();
    const given = await api(
      stack.svc.base,
      'POST',
      '/api/v1/scaffolds',
      body('given', { url: other.url, flux_url: 'ssh://git@git.example.org/fleet/given.git' }),
    );
    expect((await untilTerminal(stack.svc.base, given.json.id)).status).toBe('succeeded');
    expect(gitRepositoryUrl(other.dir, 'given')).toBe('ssh://git@git.example.org/fleet/given.git');

    const own = await nats.request('scaffolds.v1.create', body('own', { url: reference.url }));
    expect((await untilTerminal(stack.svc.base, own.json.id)).status).toBe('succeeded');
    expect(gitRepositoryUrl(reference.dir, 'own')).toBe('ssh://git@git.example.net/platform/fleet.git');

    const plain = await nats.request('scaffolds.v1.create', body('plain', { url: other.url }));
    expect((await untilTerminal(stack.svc.base, plain.json.id)).status).toBe('succeeded');
    expect(gitRepositoryUrl(other.dir, 'plain')).toBe(other.url);
  });

  it.each([
    [
      'repo.url',
      { url: 'https://bot:Sup3rSecretToken@git.example.org/fleet.git' },
      /^repo\.url: must not carry credentials/,
    ],
    ['repo.url', { url: 'https://ghpToken123456@git.example.org/fleet.git' }, /^repo\.url: must not carry credentials/],
    [
      'repo.flux_url',
      { url: 'https://git.example.org/fleet.git', flux_url: 'https://bot:Sup3rSecretToken@git.example.org/fleet.git' },
      /^repo\.flux_url: must not carry credentials/,
    ],
    [
      'repo.flux_url',
      { url: 'https://git.example.org/fleet.git', flux_url: 'git@git.example.org:fleet.git' },
      /^repo\.flux_url: Flux needs an ssh:\/\/ URL/,
    ],
    [
      'repo.flux_url',
      { url: 'https://git.example.org/fleet.git', flux_url: 'file:///srv/fleet.git' },
      /^repo\.flux_url: scheme "file" is not allowed/,
    ],
  ])('refuses %s %j, appends nothing and never echoes a credential', async (_field, repo, message) => {
    const before = await eventCount(stack.svc);
    const rest = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', body('creds', repo));
    const overNats = await nats.request('scaffolds.v1.create', body('creds', repo));
    for (const answer of [{ status: rest.status, json: rest.json }, overNats]) {
      expect(answer.status).toBe(400);
      expect(answer.json.error.message).toMatch(message);
      expect(JSON.stringify(answer.json)).not.toContain('Sup3rSecretToken');
    }
    expect(await eventCount(stack.svc)).toBe(before);
  });
});

describe('the run contract: preconditions (REST and NATS)', () => {
  // The steps run here (EXECUTOR=local) without registry settings, and the reference has a pull secret.
  const stack = useServiceStack(() => ({ REGISTRY_PASSWORD: '' }));

  it('answers 422 naming the missing registry settings before anything is appended or pushed', async () => {
    const nats = await natsApi(stack.nats.url);
    try {
      const remote = bareRepo();
      const before = await eventCount(stack.svc);
      const rest = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', body('noreg', { url: remote.url }));
      const overNats = await nats.request('scaffolds.v1.create', body('noreg', { url: remote.url }));
      for (const answer of [{ status: rest.status, json: rest.json }, overNats]) {
        expect(answer.status).toBe(422);
        expect(answer.json.error).toMatchObject({
          code: 'registry_missing',
          message: expect.stringContaining('REGISTRY_SERVER, REGISTRY_USERNAME and REGISTRY_PASSWORD'),
        });
      }
      expect(await eventCount(stack.svc)).toBe(before);
      expect(gitLog(remote.dir)).toHaveLength(1);
    } finally {
      await nats.close();
    }
  });
});
