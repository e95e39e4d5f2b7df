/**
 * Drift on a public snapshot (onedr0p's cluster-template, the home-ops layout): a cluster-vars reference with
 * SOPS-encrypted Secrets and supplied credentials, committed to a temporary git repository and scaffolded by both
 * passes into another repository. The render reproduces the environment with placeholders for the supplied keys
 * and a throwaway age recipient, so only the customer's edit is drift.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate, GenerateOptions } from '#libs/generator';
import { computeDrift } from '#libs/generator/lifecycle/drift';
import { readTree, tempDir } from '../support/files';
import { homeOpsOptions } from '../support/home-ops-options';
import { ageIdentity } from '../support/sops-open';

const FIXTURE = join(__dirname, '../fixtures/public/onedr0p-cluster-template');
const TOKENS = {
  'cert-manager/cert-manager-secret/api-token': 'AcmeCloudflareToken-cert-manager-7e7e',
  'network/external-dns-secret/api-token': 'AcmeCloudflareToken-external-dns-8f8f',
  'flux-system/cluster-secrets/SECRET_WEBHOOK_TOKEN': 'AcmeGithubWebhookToken-9a9a',
};

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

describe('drift of an environment scaffolded from the onedr0p cluster-template snapshot', () => {
  const reference = tempDir('drift-home-ops-ref');
  cpSync(FIXTURE, reference, { recursive: true });
  git(reference, 'init', '-q', '-b', 'main');
  git(reference, 'add', '-A');
  git(reference, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'snapshot');
  const repo = tempDir('drift-home-ops-env');
  const age = ageIdentity();
  const options = (pass: 'infra' | 'full'): GenerateOptions =>
    homeOpsOptions(age.recipient, repo, reference, { suppliedCredentials: TOKENS, pass });

  beforeAll(async () => {
    await generate(options('infra'));
    await generate(options('full'));
  }, 120_000);

  it('records the supplied keys by name only; as scaffolded there is no drift and the SOPS files are not compared', async () => {
    const marker = readFileSync(join(repo, 'kubernetes/main/.gitops-scaffolder.json'), 'utf8');
    expect(JSON.parse(marker)).toMatchObject({
      reference_commit: git(reference, 'rev-parse', 'HEAD'),
      inputs: { pass: 'full', secrets_backend: 'sops', supplied_credentials: Object.keys(TOKENS).sort() },
    });
    for (const value of Object.values(TOKENS)) expect(marker).not.toContain(value);
    expect(marker).not.toContain(age.recipient);

    const before = readTree(repo);
    const report = await computeDrift({ repoDir: repo, templateDir: reference, clusterName: 'acme' });
    expect(report).toMatchObject({ drifted: false, changed: [], added: [], missing: [], commits_behind: 0 });
    expect(report.folders).toEqual(['kubernetes/main']);
    expect(report.credentials_not_compared.length).toBeGreaterThan(0);
    for (const file of report.credentials_not_compared)
      expect(readFileSync(join(repo, file), 'utf8')).toContain('ENC[AES256_GCM,');
    expect(readTree(repo)).toEqual(before);
  }, 60_000);

  it("reports a customer's chart version bump as changed, and nothing else", async () => {
    const edited = 'kubernetes/main/apps/cert-manager/cert-manager/app/helmrelease.yaml';
    const original = readFileSync(join(repo, edited), 'utf8');
    writeFileSync(join(repo, edited), original.replace('version: v1.14.5', 'version: v1.15.0'));
    try {
      const report = await computeDrift({ repoDir: repo, templateDir: reference, clusterName: 'acme' });
      expect(report).toMatchObject({ drifted: true, changed: [edited], added: [], missing: [] });
    } finally {
      writeFileSync(join(repo, edited), original);
    }
  }, 60_000);
});
