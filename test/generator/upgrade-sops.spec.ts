/**
 * `generate-gitops-env upgrade` of an environment scaffolded with the SOPS backend from the shipped
 * sops-platform reference (committed to a temporary git repository): SOPS files whose keys the
 * reference keeps stay byte for byte; a reference commit that adds a key to an encrypted Secret is
 * refused by the file's name, nothing written, because re-encrypting needs the file's data key.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SHIPPED_SOPS_TEMPLATE } from '#libs/generator';
import { allFiles, tempDir } from '../support/files';
import { ageIdentity } from '../support/sops-open';
import { generatorCli } from '../support/generator-cli';

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
const commit = (dir: string, message: string) => {
  git(dir, 'add', '-A');
  git(dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', message);
};
const snapshot = (root: string) => Object.fromEntries(allFiles(root).map((f) => [f, readFileSync(join(root, f))]));

/** The command line, run in this process. */
const cli = generatorCli;

describe('generate-gitops-env upgrade with the SOPS backend', () => {
  const reference = tempDir('upgrade-sops-ref');
  cpSync(SHIPPED_SOPS_TEMPLATE, reference, { recursive: true });
  git(reference, 'init', '-q', '-b', 'main');
  commit(reference, 'reference A');
  const repo = tempDir('upgrade-sops-env');
  const age = ageIdentity();
  const credentials = join(tempDir('upgrade-sops-creds'), 'credentials.yaml');
  writeFileSync(credentials, 'cert-manager/cloudflare-api-token/api-token: CloudflareTokenForAcme-4d4d4d4d4d\n');
  chmodSync(credentials, 0o600);
  const scaffold = ['--repo', repo, '--template', reference, '--reference-env', 'dev', '--cluster-name', 'acme'].concat(
    ['--domain', 'acme.example.com', '--region', 'eu-west-1', '--acme-email', 'ops@acme.example.com'],
    // The environment's repository has no origin remote: Flux's URL is given.
    ['--source-url', 'https://git.example.org/acme/fleet.git'],
  );
  const upgrade = (...extra: string[]) =>
    cli([
      'upgrade',
      '--repo',
      repo,
      '--template',
      reference,
      '--cluster-name',
      'acme',
      '--age-recipient',
      age.recipient,
      ...extra,
    ]);
  const SECRETS = 'clusters/dev/secrets';

  beforeAll(async () => {
    const registry = {
      REGISTRY_SERVER: 'registry.acme.io',
      REGISTRY_USERNAME: 'puller',
      REGISTRY_PASSWORD: 'RegPw-0123456789abcdef',
    };
    const sops = ['--secrets-backend', 'sops', '--age-recipient', age.recipient, '--credentials', credentials];
    // The infra pass takes the full pass's inputs too: it rehearses the full pass before it writes.
    expect((await cli([...scaffold, ...sops, '--infra-only'], registry)).code).toBe(0);
    const full = await cli([...scaffold, ...sops], registry);
    expect(full).toMatchObject({ code: 0, stderr: '' });
  }, 120_000);

  it('a reference change elsewhere: every SOPS file is kept byte for byte', async () => {
    writeFileSync(join(reference, 'clusters/dev/cluster-notes.txt'), 'a note of the platform team\n');
    const text = readFileSync(join(reference, 'clusters/dev/cluster-vars.yaml'), 'utf8');
    expect(text).toMatch(/\n$/);
    writeFileSync(join(reference, 'clusters/dev/cluster-vars.yaml'), `${text}# reviewed by the platform team\n`);
    commit(reference, 'reference B: no key changes');
    const secrets = allFiles(repo).filter((f) => f.includes('/secrets/') && f.endsWith('.yaml'));
    expect(secrets.length).toBeGreaterThan(0);
    const before = snapshot(repo);
    const r = await upgrade('--json');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.outcome).toBe('upgraded');
    expect(report).toMatchObject({
      added: ['clusters/acme/cluster-notes.txt'],
      changed: ['clusters/acme/cluster-vars.yaml'],
      shared_not_upgraded: [],
    });
    expect(report.credentials).toEqual({ keys_added: [], keys_removed: [], files_added: [], files_removed: [] });
    for (const file of secrets) expect(readFileSync(join(repo, file))).toEqual(before[file]);
  }, 60_000);

  it('a reference commit that adds a key to an encrypted Secret is refused by name; nothing is written', async () => {
    const file = `${SECRETS}/postgresql-credentials.yaml`;
    const text = readFileSync(join(reference, file), 'utf8');
    const password = /^ {2}password: (ENC\[.*\])$/m.exec(text)![1];
    writeFileSync(
      join(reference, file),
      text.replace(/^( {2}password: .*\n)/m, `$1  replication-password: ${password}\n`),
    );
    commit(reference, 'reference C: a key added to an encrypted Secret');
    const before = snapshot(repo);
    const r = await upgrade();
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /postgresql-credentials\.yaml: the reference changes the keys of a SOPS-encrypted Secret \(data\/postgresql-credentials\); re-encrypting it needs the file's data key/,
    );
    expect(snapshot(repo)).toEqual(before);
  }, 60_000);
});
