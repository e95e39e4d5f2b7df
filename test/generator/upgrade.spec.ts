/**
 * `generate-gitops-env upgrade` on the shipped reference, committed to a temporary git repository whose
 * history the test makes: the environment is scaffolded by the command line's full pass at commit A,
 * then the reference moves to B (a chart version bumped in two files, a file added and two deleted, a
 * key added to and one removed from a Secret, a new Secret). Each test upgrades a copy of the
 * environment, edited as a customer would.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { SHIPPED_TEMPLATE } from '#libs/generator';
import { makeRsaCert } from '../support/certs';
import { allFiles, tempDir } from '../support/files';
import { unsealManifest } from '../support/unseal';
import { generatorCli } from '../support/generator-cli';

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
const commit = (dir: string, message: string) => {
  git(dir, 'add', '-A');
  git(dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', message);
  return git(dir, 'rev-parse', 'HEAD');
};

const REF = 'clusters/development';
const ENV = 'clusters/acme-prod';
const LEGACY = (name: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: flux-system\ndata:\n  mode: legacy\n  owner: platform\n`;

/** Rewrites a file of a folder with `edit`, failing when the edit changes nothing (the test would prove nothing). */
function edit(root: string, path: string, change: (text: string) => string) {
  const before = readFileSync(join(root, path), 'utf8');
  const after = change(before);
  expect(after).not.toBe(before);
  writeFileSync(join(root, path), after);
}

/** Commit A: the shipped reference with two legacy ConfigMaps in its infrastructure (B deletes them). */
function referenceAtA(): string {
  const dir = tempDir('upgrade-ref');
  cpSync(SHIPPED_TEMPLATE, dir, { recursive: true });
  writeFileSync(join(dir, REF, 'infrastructure/legacy-a.yaml'), LEGACY('legacy-a'));
  writeFileSync(join(dir, REF, 'infrastructure/legacy-b.yaml'), LEGACY('legacy-b'));
  edit(dir, `${REF}/infrastructure/kustomization.yaml`, (t) => `${t}  - legacy-a.yaml\n  - legacy-b.yaml\n`);
  git(dir, 'init', '-q', '-b', 'main');
  commit(dir, 'reference A');
  return dir;
}

/** Commit B of the platform team. */
function moveToB(dir: string): string {
  edit(dir, `${REF}/infrastructure/ingress-nginx.yaml`, (t) => t.replace('version: "4.11.3"', 'version: "4.12.0"'));
  edit(dir, `${REF}/infrastructure/external-dns.yaml`, (t) => t.replace('version: "1.15.0"', 'version: "1.16.1"'));
  rmSync(join(dir, REF, 'infrastructure/legacy-a.yaml'));
  rmSync(join(dir, REF, 'infrastructure/legacy-b.yaml'));
  writeFileSync(join(dir, REF, 'infrastructure/platform-settings.yaml'), LEGACY('platform-settings'));
  edit(dir, `${REF}/infrastructure/kustomization.yaml`, (t) =>
    t.replace('  - legacy-a.yaml\n  - legacy-b.yaml\n', '  - platform-settings.yaml\n'),
  );
  edit(dir, `${REF}/database/postgresql-credentials.yaml`, (t) =>
    t.replace('  database: platform\n', '  replication-password: DevReplPassw0rd-2024\n'),
  );
  writeFileSync(
    join(dir, REF, 'database/cache-credentials.yaml'),
    'apiVersion: v1\nkind: Secret\nmetadata:\n  name: cache-credentials\ntype: Opaque\nstringData:\n  password: DevCachePassw0rd-2024\n',
  );
  edit(dir, `${REF}/database/kustomization.yaml`, (t) =>
    t.replace('  - namespace.yaml\n', '  - namespace.yaml\n  - cache-credentials.yaml\n'),
  );
  return commit(dir, 'reference B');
}

/** Every file of a tree, byte for byte. */
const snapshot = (root: string) => Object.fromEntries(allFiles(root).map((f) => [f, readFileSync(join(root, f))]));
const sealed = (root: string, file: string) => parse(readFileSync(join(root, ENV, file), 'utf8'));

/** The command line, run in this process. */
const cli = generatorCli;

describe('generate-gitops-env upgrade', () => {
  const reference = referenceAtA();
  const commitA = git(reference, 'rev-parse', 'HEAD');
  let commitB: string;
  const scaffolded = tempDir('upgrade-env');
  const cert = makeRsaCert();
  const certFile = join(tempDir('upgrade-cert'), 'cert.pem');
  writeFileSync(certFile, cert.certPem);

  beforeAll(async () => {
    const pass = await cli(
      ['--repo', scaffolded, '--template', reference, '--cluster-name', 'acme-prod', '--domain', 'acme.io'].concat([
        // The environment's repository has no origin remote: Flux's URL is given.
        '--source-url',
        'https://git.example.org/acme/fleet.git',
        '--region',
        'us-east-1',
        '--acme-email',
        'ops@acme.io',
        '--sealing-cert',
        certFile,
      ]),
      { REGISTRY_SERVER: 'registry.acme.io', REGISTRY_USERNAME: 'puller', REGISTRY_PASSWORD: 'RegPw-0123456789abcdef' },
    );
    expect(pass).toMatchObject({ code: 0, stderr: '' });
    commitB = moveToB(reference);
  }, 120_000);

  /** A copy of the scaffolded environment for one test to change. */
  const environment = () => {
    const dir = tempDir('upgrade-copy');
    cpSync(scaffolded, dir, { recursive: true });
    return dir;
  };
  const upgrade = async (repo: string, ...extra: string[]) => {
    const r = await cli(['upgrade', '--repo', repo, '--template', reference, '--cluster-name', 'acme-prod', ...extra]);
    return { ...r, report: extra.includes('--json') && r.stdout ? JSON.parse(r.stdout) : undefined };
  };
  const withCert = ['--sealing-cert', certFile, '--json'];

  it('(a) a value the reference bumps in a file the customer did not touch is upgraded; an edit elsewhere stays byte for byte', async () => {
    const repo = environment();
    edit(repo, `${ENV}/infrastructure/helm-repositories.yaml`, (t) => `# acme: mirrored internally\n${t}`);
    const customer = readFileSync(join(repo, ENV, 'infrastructure/helm-repositories.yaml'));
    const before = snapshot(repo);
    const plan = await upgrade(repo, '--dry-run', ...withCert);
    expect(plan.code).toBe(0);
    expect(plan.report).toMatchObject({
      outcome: 'planned',
      reference_commit: commitA,
      reference_target: commitB,
      commits: 1,
    });
    expect(snapshot(repo)).toEqual(before);

    const { code, report } = await upgrade(repo, ...withCert);
    expect(code).toBe(0);
    expect(report.outcome).toBe('upgraded');
    expect(report.changed).toEqual(
      expect.arrayContaining([`${ENV}/infrastructure/external-dns.yaml`, `${ENV}/infrastructure/ingress-nginx.yaml`]),
    );
    expect(readFileSync(join(repo, ENV, 'infrastructure/external-dns.yaml'), 'utf8')).toContain('version: "1.16.1"');
    expect(readFileSync(join(repo, ENV, 'infrastructure/ingress-nginx.yaml'), 'utf8')).toContain('version: "4.12.0"');
    expect(readFileSync(join(repo, ENV, 'infrastructure/helm-repositories.yaml'))).toEqual(customer);
    expect(report.shared_not_upgraded).toEqual([]);
  }, 60_000);

  it('a comment is an edit too: merged into a file the reference changes, kept in one it deletes', async () => {
    const repo = environment();
    edit(repo, `${ENV}/infrastructure/external-dns.yaml`, (t) => `# acme: reviewed by security\n${t}`);
    edit(repo, `${ENV}/infrastructure/legacy-a.yaml`, (t) => `${t}# acme: still read by the billing job\n`);
    const { code, report } = await upgrade(repo, ...withCert);
    expect(code).toBe(0);
    expect(report).toMatchObject({
      merged: [`${ENV}/infrastructure/external-dns.yaml`],
      removed: [`${ENV}/infrastructure/legacy-b.yaml`],
      kept_edited: [`${ENV}/infrastructure/legacy-a.yaml`],
    });
    const text = readFileSync(join(repo, ENV, 'infrastructure/external-dns.yaml'), 'utf8');
    expect(text).toMatch(/^# acme: reviewed by security\n[^]*version: "1\.16\.1"/);
  }, 60_000);

  it('(b) a customer edit in another part of a file the reference changes is merged: both edits present', async () => {
    const repo = environment();
    edit(repo, `${ENV}/infrastructure/ingress-nginx.yaml`, (t) => t.replace('replicaCount: 2', 'replicaCount: 5'));
    const { code, report } = await upgrade(repo, ...withCert);
    expect(code).toBe(0);
    expect(report.merged).toEqual([`${ENV}/infrastructure/ingress-nginx.yaml`]);
    const text = readFileSync(join(repo, ENV, 'infrastructure/ingress-nginx.yaml'), 'utf8');
    expect(text).toContain('version: "4.12.0"');
    expect(text).toContain('replicaCount: 5');
    expect(text).not.toMatch(/^(<<<<<<<|=======|>>>>>>>)/m);
  }, 60_000);

  it('(c) an overlapping edit is a conflict: exit 3, every file byte-identical, the report names the file and lines', async () => {
    const repo = environment();
    edit(repo, `${ENV}/infrastructure/ingress-nginx.yaml`, (t) => t.replace('version: "4.11.3"', 'version: "4.11.9"'));
    const before = snapshot(repo);
    const { code, report } = await upgrade(repo, ...withCert);
    expect(code).toBe(3);
    expect(snapshot(repo)).toEqual(before);
    expect(report.outcome).toBe('conflicted');
    expect(report.conflicts).toEqual([
      {
        file: `${ENV}/infrastructure/ingress-nginx.yaml`,
        hunks: [
          {
            base_lines: { start: 11, end: 11 },
            ours_lines: { start: 11, end: 11 },
            theirs_lines: { start: 11, end: 11 },
            ours: '      version: "4.11.9"\n',
            theirs: '      version: "4.12.0"\n',
          },
        ],
      },
    ]);
    const text = await upgrade(repo, '--sealing-cert', certFile);
    expect(text.code).toBe(3);
    expect(text.stdout).toContain(
      `conflict: ${ENV}/infrastructure/ingress-nginx.yaml\n  ours lines 11-11, theirs lines 11-11 (the recorded commit's lines 11-11)\n  ours:\n    |       version: "4.11.9"\n  theirs:\n    |       version: "4.12.0"\n`,
    );
    expect(snapshot(repo)).toEqual(before);
  }, 60_000);

  it('(d) a file the reference adds is added; one it deletes is removed when unedited, kept and listed when edited', async () => {
    const repo = environment();
    edit(repo, `${ENV}/infrastructure/legacy-b.yaml`, (t) => t.replace('owner: platform', 'owner: acme-ops'));
    const edited = readFileSync(join(repo, ENV, 'infrastructure/legacy-b.yaml'));
    const { code, report } = await upgrade(repo, ...withCert);
    expect(code).toBe(0);
    expect(report).toMatchObject({
      added: expect.arrayContaining([`${ENV}/infrastructure/platform-settings.yaml`]),
      removed: [`${ENV}/infrastructure/legacy-a.yaml`],
      kept_edited: [`${ENV}/infrastructure/legacy-b.yaml`],
    });
    expect(readFileSync(join(repo, ENV, 'infrastructure/platform-settings.yaml'), 'utf8')).toContain(
      'platform-settings',
    );
    expect(existsSync(join(repo, ENV, 'infrastructure/legacy-a.yaml'))).toBe(false);
    expect(readFileSync(join(repo, ENV, 'infrastructure/legacy-b.yaml'))).toEqual(edited);
    expect(readFileSync(join(repo, ENV, 'infrastructure/kustomization.yaml'), 'utf8')).toContain(
      '- platform-settings.yaml',
    );
  }, 60_000);

  it('(e) credentials are never regenerated: ciphertext kept, an added key sealed for the cluster, a removed key gone', async () => {
    const repo = environment();
    const file = 'database/postgresql-credentials.yaml';
    const old = sealed(repo, file).spec.encryptedData;
    const rabbit = readFileSync(join(repo, ENV, 'database/rabbitmq-credentials.yaml'));

    const refused = await upgrade(repo, '--json');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `${ENV}/${file}: data/postgresql-credentials/replication-password: sealing a key the reference adds needs the cluster's certificate (--sealing-cert)`,
    );
    expect(JSON.parse(readFileSync(join(repo, ENV, '.gitops-scaffolder.json'), 'utf8')).reference_commit).toBe(commitA);

    const { code, report } = await upgrade(repo, ...withCert);
    expect(code).toBe(0);
    const now = sealed(repo, file).spec.encryptedData;
    expect(Object.keys(now).sort()).toEqual(['password', 'replication-password', 'url', 'username']);
    for (const key of ['password', 'url', 'username']) expect(now[key]).toBe(old[key]);
    const opened = unsealManifest(cert.privateKeyPem, sealed(repo, file));
    expect(opened['replication-password']).toMatch(/^\S{16,}$/);
    expect(opened['replication-password']).not.toBe('DevReplPassw0rd-2024');
    expect(readFileSync(join(repo, ENV, 'database/rabbitmq-credentials.yaml'))).toEqual(rabbit);
    expect(report.credentials).toEqual({
      keys_added: [
        `${ENV}/database/cache-credentials.yaml: data/cache-credentials/password`,
        `${ENV}/${file}: data/postgresql-credentials/replication-password`,
      ],
      keys_removed: [`${ENV}/${file}: data/postgresql-credentials/database`],
      files_added: [`${ENV}/database/cache-credentials.yaml`],
      files_removed: [],
    });
    const cache = unsealManifest(cert.privateKeyPem, sealed(repo, 'database/cache-credentials.yaml'));
    expect(cache.password).toMatch(/^\S{16,}$/);
    expect(cache.password).not.toBe('DevCachePassw0rd-2024');
    expect(JSON.stringify(report)).not.toContain(opened['replication-password']);
  }, 60_000);

  it('(f) the marker records B after, inputs unchanged; a second upgrade has nothing to do', async () => {
    const repo = environment();
    const marker = join(repo, ENV, '.gitops-scaffolder.json');
    const before = JSON.parse(readFileSync(marker, 'utf8'));
    expect(before.reference_commit).toBe(commitA);
    expect((await upgrade(repo, ...withCert)).code).toBe(0);
    expect(JSON.parse(readFileSync(marker, 'utf8'))).toEqual({ ...before, reference_commit: commitB });
    const after = snapshot(repo);
    const again = await upgrade(repo, ...withCert);
    expect([again.code, again.report.outcome]).toEqual([0, 'up-to-date']);
    expect(snapshot(repo)).toEqual(after);
  }, 60_000);

  it('refuses by name, writing nothing, a key the reference adds that is built from credentials the cluster holds (--to a branch)', async () => {
    const file = `${REF}/database/postgresql-credentials.yaml`;
    git(reference, 'checkout', '-q', '-b', 'derived-key');
    try {
      edit(reference, file, (t) =>
        t.replace(
          '  username: platform_dev\n',
          '  username: platform_dev\n  jdbc-url: jdbc:postgresql://postgresql.data.svc:5432/platform?user=platform_dev&password=DevPgPassw0rd-Insecure-2024\n',
        ),
      );
      commit(reference, 'reference C: a derived key');
    } finally {
      git(reference, 'checkout', '-q', 'main');
    }
    const repo = environment();
    const before = snapshot(repo);
    const r = await upgrade(repo, '--to', 'derived-key', '--sealing-cert', certFile);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `${ENV}/database/postgresql-credentials.yaml: data/postgresql-credentials/jdbc-url is built from credentials the cluster already holds, which an upgrade cannot read`,
    );
    expect(r.stderr).not.toContain('DevPgPassw0rd');
    expect(snapshot(repo)).toEqual(before);
  }, 60_000);

  it('refuses, writing nothing, a --to naming no commit and an environment without a marker', async () => {
    const repo = environment();
    const before = snapshot(repo);
    const unknown = await upgrade(repo, '--to', 'no-such-rev');
    expect([unknown.code, unknown.stderr]).toEqual([2, expect.stringContaining('no-such-rev names no commit')]);
    const none = await cli(['upgrade', '--repo', repo, '--template', reference, '--cluster-name', 'other']);
    expect([none.code, none.stderr]).toEqual([
      2,
      expect.stringContaining('no ownership marker (.gitops-scaffolder.json) for cluster other'),
    ]);
    expect(snapshot(repo)).toEqual(before);
  }, 60_000);
});
