import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { makeRsaCert } from '../support/certs';
import { FakeKube } from '../support/fake-kube';
import { tempDir } from '../support/files';
import { credentialsDir, HttpsGitServer, SshGitServer } from '../support/git-servers';
import { writeSuppliedReference } from '../support/reference-repos';
import { api, eventCount, natsApi, untilTerminal } from '../support/service';
import { useServiceStack } from '../support/service-stack';
import { gitLog, pushAsAnotherWriter } from '../support/services';

jest.setTimeout(240_000);

const KEYS = {
  alice: 'alice-tenant-key-0123456789',
  bob: 'bob-tenant-key-0123456789ab',
  teamA: 'team-a-scoped-key-0123456789',
  carol: 'carol-hashed-key-0123456789',
  tenantA: 'tenant-a-ssh-key-0123456789',
};
const GIT = { username: 'tenants-git', password: 'TenantsGitPassword-4c5d6e' };
/** The supplied credential Alice's Secret holds (must reach her repository sealed, never another's). */
const ALICE_TOKEN = 'AliceDnsToken-issued-1234567';
const PLATFORM_TOKEN = 'PlatformAdminToken-do-not-leak-98765';
/** Alice's cluster values: no answer to another key may contain them. */
const ALICE = { domain: 'shop.alice-corp.example', region: 'us-east-1' };
const refusedCodes = (r: { status: number; json: any }) => [r.status, r.json?.error?.code];

/**
 * Tenants on one service: a key's cluster folders, repositories and Secrets are its own. Each attack
 * of the issue is tried over REST and NATS; each is refused before anything is cloned, appended or
 * pushed, and no answer carries the other tenant's values.
 */
describe('tenants stay apart (REST and NATS)', () => {
  let management: FakeKube;
  let git: HttpsGitServer;
  /** sshd on port 22 of an address of its own: what a scp-like URL (no port) reaches. */
  let ssh: SshGitServer;
  const workDir = tempDir('tenants-work');
  const template = tempDir('tenants-reference');
  let keysFile: string;

  beforeAll(async () => {
    management = await new FakeKube().start();
    git = await HttpsGitServer.start(GIT);
    ssh = await SshGitServer.start({ defaultPort: true });
    writeSuppliedReference(template);
    management.putSecret('capi-clusters', 'alice-credentials', {
      'credentials.yaml': `data/dns-provider/api-token: ${ALICE_TOKEN}\n`,
    });
    management.putSecret('capi-clusters', 'bob-credentials', {
      'credentials.yaml': `data/dns-provider/api-token: BobDnsToken-0000\n`,
    });
    management.putSecret('team-a', 'team-a-credentials', {
      'credentials.yaml': `data/dns-provider/api-token: TeamADnsToken-0000\n`,
    });
    management.putSecret('kube-system', 'platform-admin-creds', {
      'credentials.yaml': `data/dns-provider/api-token: ${PLATFORM_TOKEN}\n`,
    });
    keysFile = join(tempDir('tenants-keys'), 'keys.yaml');
    writeFileSync(
      keysFile,
      `- {name: alice, role: operator, key: ${KEYS.alice}}
- {name: bob, role: operator, key: ${KEYS.bob}}
- name: team-a
  role: operator
  key: ${KEYS.teamA}
  repositories: ["https://127.0.0.1:${git.port}/team-a"]
  secret_namespaces: [team-a]
- name: tenant-a
  role: operator
  key: ${KEYS.tenantA}
  repositories: ["ssh://${userInfo().username}@${ssh.host}${ssh.dir}/tenant-a"]
- {name: carol, role: reader, key_sha256: ${createHash('sha256').update(KEYS.carol).digest('hex')}}
`,
    );
  });
  const stack = useServiceStack(() => ({
    API_KEYS_FILE: keysFile,
    WORK_DIR: workDir,
    TEMPLATE_DIR: template,
    KUBECONFIG: management.kubeconfigFile(),
    SECRET_NAMESPACES: 'capi-clusters',
    GIT_CREDENTIALS_DIR: credentialsDir({
      ...GIT,
      'ssh-privatekey': ssh.clientKey,
      known_hosts: `${ssh.knownHostsLine}\n`,
    }),
    GIT_CREDENTIALS_HOSTS: `127.0.0.1:${git.port}`,
    GIT_CA_FILE: git.tls.caFile,
  }));
  afterAll(async () => {
    await management?.stop();
    await git?.stop();
    await ssh?.stop();
  });
  let nats: Awaited<ReturnType<typeof natsApi>>;
  beforeAll(async () => (nats = await natsApi(stack.nats.url)));
  afterAll(() => nats?.close());

  const as = (key: string) => ({ 'x-api-key': key });
  const cert = makeRsaCert();
  const body = (cluster: string, url: string, extra: Record<string, unknown> = {}) => ({
    cluster_name: cluster,
    domain: `${cluster}.example.org`,
    region: 'eu-central-1',
    acme_email: 'ops@example.org',
    repo: { url, branch: 'main' },
    target: { sealing_cert_pem: cert.certPem },
    credentials_secret: { namespace: 'capi-clusters', name: 'bob-credentials' },
    ...extra,
  });
  /** REST and NATS answers to one create or preview body, for one key. */
  const bothWays = async (what: 'create' | 'preview', payload: unknown, key: string) => [
    await api(
      stack.svc.base,
      'POST',
      what === 'create' ? '/api/v1/scaffolds' : '/api/v1/scaffolds/preview',
      payload,
      as(key),
    ),
    await nats.request(`scaffolds.v1.${what}`, payload, key),
  ];
  /** What must not change when a request is refused: the stream, the git server's traffic, the repository, the scratch folders. */
  const sideEffects = async (repoDir: string) => ({
    events: await eventCount(stack.svc),
    gitRequests: git.attempts.length,
    commits: gitLog(repoDir),
    previews: existsSync(join(workDir, 'preview')) ? readdirSync(join(workDir, 'preview')) : [],
  });
  const marker = (repoDir: string, cluster: string) =>
    JSON.parse(
      execFileSync('git', ['--git-dir', repoDir, 'show', `main:clusters/${cluster}/.gitops-scaffolder.json`], {
        encoding: 'utf8',
      }),
    );

  describe("another key and Alice's cluster folder", () => {
    let aliceRepo: { url: string; dir: string };
    let bobRepo: { url: string; dir: string };
    /** Alice's own request for her cluster "shop", with her supplied credentials. */
    const aliceShop = () =>
      body('shop', aliceRepo.url, {
        ...ALICE,
        credentials_secret: { namespace: 'capi-clusters', name: 'alice-credentials' },
      });

    beforeAll(async () => {
      aliceRepo = git.repo('alice/fleet');
      bobRepo = git.repo('bob-fleet');
      const created = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', aliceShop(), as(KEYS.alice));
      expect(created.status).toBe(202);
      expect((await untilTerminal(stack.svc.base, created.json.id)).status).toBe('succeeded');
    });

    it("records Alice as the folder's owner in the marker", () => {
      // Version 2 also records what made the environment (the reference commit, the inputs): ownership is these fields.
      expect(marker(aliceRepo.dir, 'shop')).toMatchObject({
        cluster_name: 'shop',
        ...ALICE,
        reference_env: 'development',
        owner: 'alice',
        marker_version: 2,
      });
    });

    it("Bob's preview and create for Alice's repository and cluster (any URL of it): 403 cluster_owned_elsewhere, nothing cloned, appended or pushed, none of her values", async () => {
      const before = await sideEffects(aliceRepo.dir);
      const bobCert = makeRsaCert();
      const variants = [
        aliceRepo.url,
        aliceRepo.url.replace(/\.git$/, ''),
        `${aliceRepo.url}/`,
        aliceRepo.url.replace('https://127.0.0.1', 'HTTPS://127.0.0.1'),
        // A forge's paths ignore case (GitHub's org/Fleet is org/fleet): the ownership check does too (#47 review).
        aliceRepo.url.replace('/alice/fleet', '/Alice/Fleet'),
      ];
      for (const url of variants) {
        // Probing with Bob's own values (what used to answer `domain is "shop.alice-corp.example"`)...
        const answers = await bothWays('preview', body('shop', url), KEYS.bob);
        // ...and the takeover itself: Alice's values, Bob's certificate and Bob's repository for Flux.
        const takeover = {
          ...body('shop', url, ALICE),
          target: { sealing_cert_pem: bobCert.certPem },
          repo: { url, branch: 'main', flux_url: bobRepo.url },
        };
        answers.push(...(await bothWays('create', takeover, KEYS.bob)));
        for (const answer of answers) {
          expect([url, ...refusedCodes(answer)]).toEqual([url, 403, 'cluster_owned_elsewhere']);
          expect(answer.json.error.message).toBe('cluster shop in this repository belongs to another key');
        }
        const previewTexts = answers.slice(0, 2).map((a) => JSON.stringify(a.json));
        for (const text of previewTexts)
          for (const value of [ALICE.domain, ALICE.region, 'development', 'alice']) expect(text).not.toContain(value);
      }
      expect(await sideEffects(aliceRepo.dir)).toEqual(before);
      expect(marker(aliceRepo.dir, 'shop').owner).toBe('alice');
      expect((await api(stack.svc.base, 'GET', '/api/v1/scaffolds', undefined, as(KEYS.bob))).json.items).toEqual([]);
    });

    it('Bob\'s preview and create for a spelling of Alice\'s repository with an empty or "." segment (alice//fleet): 400 naming repo.url, nothing cloned, appended or pushed', async () => {
      const before = await sideEffects(aliceRepo.dir);
      for (const url of [
        aliceRepo.url.replace('/alice/', '/alice//'),
        aliceRepo.url.replace('/alice/', '//alice/'),
        aliceRepo.url.replace('/alice/', '/alice/./'),
      ]) {
        const answers = [
          ...(await bothWays('preview', body('shop', url), KEYS.bob)),
          ...(await bothWays('create', body('shop', url, ALICE), KEYS.bob)),
        ];
        for (const answer of answers)
          expect([url, ...refusedCodes(answer), answer.json.error?.details?.[0].field]).toEqual([
            url,
            400,
            'invalid_request',
            'repo.url',
          ]);
      }
      expect(await sideEffects(aliceRepo.dir)).toEqual(before);
      expect(marker(aliceRepo.dir, 'shop').owner).toBe('alice');
    });

    it('Alice herself may preview it; an admin may scaffold it again, acting for Alice (the marker stays hers)', async () => {
      const own = await api(stack.svc.base, 'POST', '/api/v1/scaffolds/preview', aliceShop(), as(KEYS.alice));
      expect(own.status).toBe(200);
      const admin = await api(stack.svc.base, 'POST', '/api/v1/scaffolds', aliceShop());
      expect(admin.status).toBe(202);
      expect((await untilTerminal(stack.svc.base, admin.json.id)).status).toBe('succeeded');
      const [requested] = (await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${admin.json.id}/events`)).json.items;
      expect(requested.data).toMatchObject({ requested_by: 'default', cluster_owner: 'alice' });
      expect(marker(aliceRepo.dir, 'shop').owner).toBe('alice');
    });

    it('a folder whose marker names another owner but which the read-model does not know: the run fails before pushing, naming none of its values', async () => {
      const legacyRepo = git.repo('written-elsewhere');
      pushAsAnotherWriter(
        legacyRepo.dir,
        {
          'clusters/depot/.gitops-scaffolder.json': JSON.stringify({
            cluster_name: 'depot',
            ...ALICE,
            reference_env: 'development',
            owner: 'alice',
          }),
        },
        'a folder written by another scaffolder instance',
      );
      const commits = gitLog(legacyRepo.dir);
      // Bob's own values (the marker's used to be quoted back), then hers (the takeover): the owner alone refuses both.
      for (const values of [{}, ALICE]) {
        const created = await api(
          stack.svc.base,
          'POST',
          '/api/v1/scaffolds',
          body('depot', legacyRepo.url, values),
          as(KEYS.bob),
        );
        expect(created.status).toBe(202);
        const run = await untilTerminal(stack.svc.base, created.json.id);
        expect([run.status, run.message]).toEqual([
          'failed',
          'infra-pass failed: clusters/depot/ belongs to another cluster or owner; refusing to write over it',
        ]);
        if (values === ALICE) continue;
        const seen =
          JSON.stringify(run) +
          (await api(stack.svc.base, 'GET', `/api/v1/scaffolds/${run.id}/logs`, undefined, as(KEYS.bob))).text;
        for (const value of [ALICE.domain, ALICE.region, 'alice', 'development']) expect(seen).not.toContain(value);
      }
      expect(gitLog(legacyRepo.dir)).toEqual(commits);
    });
  });

  describe('repository scopes', () => {
    it('a scoped key outside its prefixes (repo.url or repo.flux_url, a sibling or a climb out): 403 repository_not_allowed, or 400 for a climb no URL may hold, nothing cloned', async () => {
      const inside = git.repo('team-a/fleet');
      const before = await sideEffects(inside.dir);
      const base = `https://127.0.0.1:${git.port}`;
      const outside = [403, 'repository_not_allowed'];
      const climb = [400, 'invalid_request'];
      for (const [repo, refused] of [
        [{ url: `${base}/team-a-evil/fleet.git` }, outside],
        [{ url: `${base}/team-b/fleet.git` }, outside],
        [{ url: inside.url, flux_url: `${base}/team-b/fleet.git` }, outside],
        [{ url: `${base}/team-a/../team-b/fleet.git` }, climb],
        [{ url: `${base}/team-a/%2e%2e/team-b/fleet.git` }, climb],
      ] as const) {
        for (const what of ['create', 'preview'] as const) {
          for (const answer of await bothWays(
            what,
            {
              ...body('scoped', repo.url),
              repo,
              credentials_secret: { namespace: 'team-a', name: 'team-a-credentials' },
            },
            KEYS.teamA,
          )) {
            expect([repo, what, ...refusedCodes(answer)]).toEqual([repo, what, ...refused]);
          }
        }
      }
      expect(await sideEffects(inside.dir)).toEqual(before);
      const allowed = await api(
        stack.svc.base,
        'POST',
        '/api/v1/scaffolds/preview',
        body('scoped', inside.url, { credentials_secret: { namespace: 'team-a', name: 'team-a-credentials' } }),
        as(KEYS.teamA),
      );
      expect(allowed.status).toBe(200);
    });
  });

  describe('repository scopes over ssh (a real sshd on port 22)', () => {
    const user = userInfo().username;
    /** A scp-like URL (user@host:/path) of the ssh server. */
    const scpLike = (path: string) => `${user}@${ssh.host}:${ssh.dir}/${path}`;

    it('a key scoped to tenant-a and a URL climbing into tenant-b with //.. (scp-like or ssh://): 400 naming repo.url before anything is cloned, no commit in tenant-b', async () => {
      const tenantB = ssh.repo('tenant-b/fleet');
      const before = { commits: gitLog(tenantB.dir), events: await eventCount(stack.svc) };
      for (const url of [
        scpLike('tenant-a//../tenant-b/fleet.git'),
        `ssh://${user}@${ssh.host}${ssh.dir}/tenant-a//../tenant-b/fleet.git`,
      ]) {
        for (const what of ['create', 'preview'] as const) {
          for (const answer of await bothWays(what, body('climb', url), KEYS.tenantA)) {
            expect([url, what, ...refusedCodes(answer), answer.json.error?.details?.[0].field]).toEqual([
              url,
              what,
              400,
              'invalid_request',
              'repo.url',
            ]);
          }
        }
      }
      expect({ commits: gitLog(tenantB.dir), events: await eventCount(stack.svc) }).toEqual(before);
    });

    it("the key's own scp-like URL is recorded, checked and pushed to as its ssh:// form: two commits in tenant-a", async () => {
      const tenantA = ssh.repo('tenant-a/fleet');
      const created = await api(
        stack.svc.base,
        'POST',
        '/api/v1/scaffolds',
        body('own-ssh', scpLike('tenant-a/fleet.git')),
        as(KEYS.tenantA),
      );
      expect(created.status).toBe(202);
      expect(created.json.repo_url).toBe(`ssh://${user}@${ssh.host}${ssh.dir}/tenant-a/fleet.git`);
      expect((await untilTerminal(stack.svc.base, created.json.id)).status).toBe('succeeded');
      expect(gitLog(tenantA.dir)).toHaveLength(3);
    });
  });

  describe('Secrets a request may name', () => {
    let repo: { url: string; dir: string };
    beforeAll(() => (repo = git.repo('secrets-fleet')));

    it("credentials_secret or kubeconfig_secret outside the key's namespaces: 403 secret_namespace_not_allowed, for admins without scopes too", async () => {
      const before = await sideEffects(repo.dir);
      const cases: Array<[string, Record<string, unknown>]> = [
        [KEYS.bob, { credentials_secret: { namespace: 'kube-system', name: 'platform-admin-creds' } }],
        [
          KEYS.bob,
          { target: { kubeconfig_secret: { namespace: 'kube-system', name: 'admin-kubeconfig', key: 'value' } } },
        ],
        [KEYS.teamA, { credentials_secret: { namespace: 'capi-clusters', name: 'alice-credentials' } }],
        [
          'test-api-key-0123456789abcdef',
          { credentials_secret: { namespace: 'kube-system', name: 'platform-admin-creds' } },
        ],
      ];
      for (const [key, extra] of cases) {
        const url = key === KEYS.teamA ? `https://127.0.0.1:${git.port}/team-a/fleet.git` : repo.url;
        for (const what of ['create', 'preview'] as const) {
          for (const answer of await bothWays(what, body('secrets', url, extra), key)) {
            expect([extra, what, ...refusedCodes(answer)]).toEqual([extra, what, 403, 'secret_namespace_not_allowed']);
            expect(JSON.stringify(answer.json)).not.toContain(PLATFORM_TOKEN);
          }
        }
      }
      expect(await sideEffects(repo.dir)).toEqual(before);
      expect(management.requests.filter((r) => r.path.includes('/namespaces/kube-system/secrets/'))).toEqual([]);
    });

    it('a Secret that is missing, not labelled as an input, or forbidden by RBAC: the same answers to create and preview, and the same run failure', async () => {
      management.putSecret(
        'capi-clusters',
        'unlabelled-creds',
        { 'credentials.yaml': `data/dns-provider/api-token: ${PLATFORM_TOKEN}\n` },
        { input: false },
      );
      management.putSecret('capi-clusters', 'rbac-hidden-creds', {
        'credentials.yaml': `data/dns-provider/api-token: ${PLATFORM_TOKEN}\n`,
      });
      management.forbiddenSecrets.add('capi-clusters/rbac-hidden-creds');
      const shapes = [];
      for (const [i, name] of ['no-such-creds', 'unlabelled-creds', 'rbac-hidden-creds'].entries()) {
        const ref = { credentials_secret: { namespace: 'capi-clusters', name } };
        const cluster = `probe-${i}`;
        const [preview, natsPreview] = await bothWays('preview', body(cluster, repo.url, ref), KEYS.bob);
        const created = await api(
          stack.svc.base,
          'POST',
          '/api/v1/scaffolds',
          body(cluster, repo.url, ref),
          as(KEYS.bob),
        );
        const run = await untilTerminal(stack.svc.base, created.json.id);
        const same = (text: string) => text.replaceAll(name, '<name>').replaceAll(cluster, '<cluster>');
        shapes.push({
          preview: [preview.status, same(JSON.stringify(preview.json))],
          natsPreview: [natsPreview.status, same(JSON.stringify(natsPreview.json))],
          create: [created.status, created.json.status],
          run: [run.status, same(run.message)],
        });
        expect(JSON.stringify([preview.json, natsPreview.json, run])).not.toContain(PLATFORM_TOKEN);
      }
      expect(shapes[1]).toEqual(shapes[0]);
      expect(shapes[2]).toEqual(shapes[0]);
      expect(shapes[0].create).toEqual([202, 'queued']);
      expect(shapes[0].run).toEqual([
        'failed',
        expect.stringContaining('credentials Secret capi-clusters/<name> is not available'),
      ]);
      expect(gitLog(repo.dir)).toHaveLength(1);
    });
  });

  describe('API_KEYS_FILE', () => {
    it('a key given as key_sha256 authenticates (REST and NATS) with its role', async () => {
      expect((await api(stack.svc.base, 'GET', '/api/v1/scaffolds', undefined, as(KEYS.carol))).status).toBe(200);
      expect((await nats.request('scaffolds.v1.list', {}, KEYS.carol)).status).toBe(200);
      expect(
        refusedCodes(
          await api(
            stack.svc.base,
            'POST',
            '/api/v1/scaffolds/preview',
            body('carol', 'https://git.example.com/x.git'),
            as(KEYS.carol),
          ),
        ),
      ).toEqual([403, 'forbidden']);
    });

    it('a bad file stops the service at start, naming the problem and not the key', async () => {
      const bad = join(tempDir('bad-keys'), 'keys.yaml');
      writeFileSync(bad, `- {name: mallory, role: superuser, key: ${KEYS.alice}}\n`);
      const started = await stack.start({ API_KEYS_FILE: bad }).then(
        (svc) => svc.stop().then(() => 'started'),
        (e: Error) => e.message,
      );
      expect(started).toMatch(
        /^API_KEYS_FILE: entry 1 \(name "mallory"\) role: must be equal to one of the allowed values/,
      );
      expect(started).not.toContain(KEYS.alice);
    });
  });
});
