/**
 * `generate-gitops-env drift` on the shipped reference, committed to a temporary git repository: an
 * environment scaffolded by the command line's full pass, then edited, re-indented, left behind by a new
 * reference commit, or carrying a marker from before markers recorded the reference commit.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { SHIPPED_TEMPLATE } from '#libs/generator';
import { makeRsaCert } from '../support/certs';
import { readTree, tempDir } from '../support/files';
import { generatorCli } from '../support/generator-cli';

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** The shipped reference as the only commit of a new repository (its working copy is the template). */
function referenceRepository(): string {
  const dir = tempDir('drift-ref');
  cpSync(SHIPPED_TEMPLATE, dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '-A');
  git(dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'reference A');
  return dir;
}

const REGISTRY = {
  REGISTRY_SERVER: 'registry.acme.io',
  REGISTRY_USERNAME: 'puller',
  REGISTRY_PASSWORD: 'RegPw-0123456789abcdef',
};
const MARKER = 'clusters/acme-prod/.gitops-scaffolder.json';
/** Flux's URL for the environment's repository, which has no origin remote. */
const SOURCE_URL = ['--source-url', 'https://git.example.org/acme/fleet.git'];

/** The command line, run in this process. */
const cli = generatorCli;

describe('generate-gitops-env drift', () => {
  const reference = referenceRepository();
  const scaffolded = tempDir('drift-env');
  const certFile = join(tempDir('drift-cert'), 'cert.pem');
  writeFileSync(certFile, makeRsaCert().certPem);

  beforeAll(async () => {
    const pass = await cli(
      ['--repo', scaffolded, '--template', reference, '--cluster-name', 'acme-prod', '--domain', 'acme.io'].concat([
        ...SOURCE_URL,
        '--region',
        'us-east-1',
        '--acme-email',
        'ops@acme.io',
        '--sealing-cert',
        certFile,
      ]),
      REGISTRY,
    );
    expect(pass).toMatchObject({ code: 0, stderr: '' });
  }, 120_000);

  /** A copy of the scaffolded environment for one test to change. */
  const environment = () => {
    const dir = tempDir('drift-copy');
    cpSync(scaffolded, dir, { recursive: true });
    return dir;
  };
  const drift = async (repo: string, ...extra: string[]) => {
    const r = await cli(['drift', '--repo', repo, '--template', reference, '--cluster-name', 'acme-prod', ...extra]);
    return { ...r, report: r.code === 0 && extra.includes('--json') ? JSON.parse(r.stdout) : undefined };
  };

  it('the marker records the reference commit and the inputs, never a secret value', () => {
    const text = readFileSync(join(scaffolded, MARKER), 'utf8');
    const marker = JSON.parse(text);
    expect(marker).toMatchObject({
      cluster_name: 'acme-prod',
      marker_version: 2,
      reference_commit: git(reference, 'rev-parse', 'HEAD'),
      inputs: {
        acme_email: 'ops@acme.io',
        pass: 'full',
        secrets_backend: 'sealed-secrets',
        registry_credentials: true,
      },
    });
    expect(marker.reference_dirty).toBeUndefined();
    expect(text).not.toContain(REGISTRY.REGISTRY_PASSWORD);
    expect(text).not.toContain('BEGIN CERTIFICATE');
  });

  it('(a) an environment as scaffolded has no drift; its sealed credentials are listed, not compared', async () => {
    const repo = environment();
    const { code, report } = await drift(repo, '--json');
    expect(code).toBe(0);
    expect(report).toMatchObject({ drifted: false, changed: [], added: [], missing: [], commits_behind: 0 });
    expect(report.credentials_not_compared).toEqual(
      expect.arrayContaining(['clusters/acme-prod/database/postgresql-credentials.yaml']),
    );
    const text = await drift(repo);
    expect(text.stdout).toMatch(/credentials, not compared:\n {2}clusters\/acme-prod\//);
    expect(text.stdout.trimEnd().split('\n').pop()).toBe('no drift');
  }, 60_000);

  it('(b) a customer edit is reported as changed, an added file as added, a deleted one as missing', async () => {
    const repo = environment();
    const edited = 'clusters/acme-prod/infrastructure/ingress-nginx.yaml';
    writeFileSync(
      join(repo, edited),
      readFileSync(join(repo, edited), 'utf8').replace(/replicaCount: \d+/, 'replicaCount: 7'),
    );
    writeFileSync(join(repo, 'clusters/acme-prod/apps/extra.yaml'), 'kind: ConfigMap\n');
    execFileSync('rm', [join(repo, 'clusters/acme-prod/cert-manager-config/cluster-issuers.yaml')]);
    const { code, report } = await drift(repo, '--json');
    expect(code).toBe(0);
    expect(report).toMatchObject({
      drifted: true,
      changed: [edited],
      added: ['clusters/acme-prod/apps/extra.yaml'],
      missing: ['clusters/acme-prod/cert-manager-config/cluster-issuers.yaml'],
    });
    expect((await drift(repo)).stdout).toContain(
      `changed (differs from what the recorded commit renders):\n  ${edited}\n`,
    );
  }, 60_000);

  it('(c) a YAML file re-indented with its keys reordered is no drift', async () => {
    const repo = environment();
    const file = join(repo, 'clusters/acme-prod/infrastructure/cert-manager.yaml');
    const docs = parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS());
    const reversed = (v: any): any =>
      Array.isArray(v)
        ? v.map(reversed)
        : v && typeof v === 'object'
          ? Object.fromEntries(
              Object.entries(v)
                .reverse()
                .map(([k, x]) => [k, reversed(x)]),
            )
          : v;
    const rewritten = docs.map((d) => stringify(reversed(d), { indent: 4 })).join('---\n');
    expect(rewritten).not.toBe(readFileSync(file, 'utf8'));
    writeFileSync(file, rewritten);
    const { report } = await drift(repo, '--json');
    expect(report).toMatchObject({ drifted: false, changed: [] });
  }, 60_000);

  it('(d) a new reference commit: one commit behind, drift still measured against the recorded one', async () => {
    const moved = tempDir('drift-ref-moved');
    cpSync(reference, moved, { recursive: true });
    writeFileSync(join(moved, 'README-platform.md'), 'a newer reference\n');
    git(moved, 'add', '-A');
    git(moved, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'reference B');
    const repo = environment();
    const r = await cli(['drift', '--repo', repo, '--template', moved, '--cluster-name', 'acme-prod', '--json']);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({
      commits_behind: 1,
      drifted: false,
      reference_newest: git(moved, 'rev-parse', 'HEAD'),
    });
    expect(report.reference_commit).toBe(git(reference, 'rev-parse', 'HEAD'));
    const pinned = await cli([
      'drift',
      '--repo',
      repo,
      '--template',
      moved,
      '--cluster-name',
      'acme-prod',
      '--to',
      'HEAD~1',
      '--json',
    ]);
    expect(JSON.parse(pinned.stdout).commits_behind).toBe(0);
    // Read-only: the template's working copy, index and worktrees are as they were.
    expect(git(moved, 'status', '--porcelain')).toBe('');
    expect(git(moved, 'worktree', 'list').split('\n')).toHaveLength(1);
  }, 60_000);

  it('(e) refuses a marker from before the reference commit was recorded, a missing marker, and a commit the template lacks', async () => {
    const repo = environment();
    const { cluster_name, domain, region, reference_env } = JSON.parse(readFileSync(join(repo, MARKER), 'utf8'));
    writeFileSync(join(repo, MARKER), JSON.stringify({ cluster_name, domain, region, reference_env }, null, 2));
    const before = readTree(repo);
    const old = await drift(repo);
    expect([old.code, old.stderr]).toEqual([
      2,
      'generate-gitops-env drift: cluster acme-prod was scaffolded before markers recorded the reference commit; cannot compute drift\n',
    ]);
    expect(readTree(repo)).toEqual(before);
    const none = await cli(['drift', '--repo', repo, '--template', reference, '--cluster-name', 'other']);
    expect([none.code, none.stderr]).toEqual([
      2,
      expect.stringContaining('no ownership marker (.gitops-scaffolder.json) for cluster other'),
    ]);

    const foreign = environment();
    const marker = JSON.parse(readFileSync(join(foreign, MARKER), 'utf8'));
    writeFileSync(join(foreign, MARKER), JSON.stringify({ ...marker, reference_commit: 'f'.repeat(40) }));
    const unknown = await drift(foreign);
    expect([unknown.code, unknown.stderr]).toEqual([2, expect.stringContaining('is not in the history of HEAD')]);
  }, 60_000);

  it('a marker of version 1 is still read: a pass for its cluster goes on and records the commit, another is refused', async () => {
    const repo = environment();
    const { cluster_name, domain, region, reference_env } = JSON.parse(readFileSync(join(repo, MARKER), 'utf8'));
    writeFileSync(join(repo, MARKER), JSON.stringify({ cluster_name, domain, region, reference_env }, null, 2));
    const args = [
      ...SOURCE_URL,
      '--repo',
      repo,
      '--template',
      reference,
      '--cluster-name',
      'acme-prod',
      '--region',
      'us-east-1',
    ].concat(['--acme-email', 'ops@acme.io', '--sealing-cert', certFile, '--no-validate']);
    const other = await cli([...args, '--domain', 'other.io'], REGISTRY);
    expect([other.code, other.stderr]).toEqual([
      2,
      'generate-gitops-env: clusters/acme-prod/ belongs to another cluster or owner; refusing to write over it\n',
    ]);
    expect((await cli([...args, '--domain', 'acme.io'], REGISTRY)).code).toBe(0);
    expect(JSON.parse(readFileSync(join(repo, MARKER), 'utf8'))).toMatchObject({
      marker_version: 2,
      reference_commit: git(reference, 'rev-parse', 'HEAD'),
    });
  }, 60_000);

  it('refuses, naming it, a file of the recorded commit over MAX_REPO_FILE_BYTES, before any of it is written', async () => {
    const large = tempDir('drift-ref-large');
    cpSync(reference, large, { recursive: true });
    writeFileSync(join(large, 'big.txt'), 'x'.repeat(150_000));
    git(large, 'add', '-A');
    git(large, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'a large file');
    const repo = tempDir('drift-env-large');
    const scaffold = ['--repo', repo, '--template', large, '--cluster-name', 'acme-prod', '--domain', 'acme.io'].concat(
      ['--region', 'us-east-1', '--acme-email', 'ops@acme.io', '--infra-only', '--no-validate', ...SOURCE_URL],
    );
    expect((await cli(scaffold, REGISTRY)).code).toBe(0);
    const r = await cli(['drift', '--repo', repo, '--template', large, '--cluster-name', 'acme-prod'], {
      MAX_REPO_FILE_BYTES: '100000',
    });
    expect([r.code, r.stderr]).toEqual([
      2,
      'generate-gitops-env drift: big.txt of the reference is larger than 100000 bytes, the limit MAX_REPO_FILE_BYTES sets for a file of a repository; refusing to read it\n',
    ]);
  }, 60_000);

  it('records a dirty reference and says so in the report', async () => {
    const dirty = tempDir('drift-ref-dirty');
    cpSync(reference, dirty, { recursive: true });
    writeFileSync(join(dirty, 'NOTES.md'), 'uncommitted\n');
    const repo = tempDir('drift-env-dirty');
    const pass = await cli(
      [
        '--repo',
        repo,
        '--template',
        dirty,
        '--cluster-name',
        'acme-prod',
        '--domain',
        'acme.io',
        '--region',
        'us-east-1',
      ].concat(['--acme-email', 'ops@acme.io', '--infra-only', '--no-validate', ...SOURCE_URL]),
      REGISTRY,
    );
    expect(pass.code).toBe(0);
    expect(JSON.parse(readFileSync(join(repo, MARKER), 'utf8'))).toMatchObject({
      reference_dirty: true,
      inputs: { pass: 'infra' },
    });
    const r = await cli(['drift', '--repo', repo, '--template', dirty, '--cluster-name', 'acme-prod']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('warning: the reference had uncommitted changes');
  }, 60_000);
});
