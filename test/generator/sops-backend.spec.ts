import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { generate, GenerateOptions, GeneratorInputError } from '#libs/generator';
import { allFiles, kustomize, readTree, tempDir, yamlObjects } from '../support/files';
import { SHIPPED_PLANTED, withBase64 } from '../support/planted';
import { ageIdentity, sopsOpen } from '../support/sops-open';

describe('generator with the SOPS backend (age recipients, checked with the age command line)', () => {
  const cluster = ageIdentity();
  const options = (repoDir: string, extra: Partial<GenerateOptions> = {}): GenerateOptions => ({
    repoDir,
    clusterName: 'sops-prod',
    domain: 'sops.example.com',
    region: 'eu-central-1',
    acmeEmail: 'ops@sops.example.com',
    pass: 'full',
    secretsBackend: 'sops',
    ageRecipients: [cluster.recipient],
    registry: {
      server: 'registry.sops.example.com',
      username: 'sops-puller',
      password: 'SopsRegistryPassword-0123456789',
    },
    ...extra,
  });

  it('writes SOPS-encrypted Secrets that open to the generated credentials, the .sops.yaml rule and the decryption blocks', async () => {
    const repo = tempDir('sops');
    await generate(options(repo, { pass: 'infra' }));
    const { summary, credentials } = await generate(options(repo));
    expect(summary.secrets_backend).toBe('sops');
    expect(summary.objects_sealed.map((o) => o.scope)).toEqual(['sops', 'sops', 'sops']);
    for (const file of [
      'apps/registry-credentials.yaml',
      'database/postgresql-credentials.yaml',
      'database/rabbitmq-credentials.yaml',
    ]) {
      const [doc] = yamlObjects(join(repo, 'clusters/sops-prod', file));
      expect(doc.kind).toBe('Secret');
      expect(doc.sops.age[0].recipient).toBe(cluster.recipient);
      const { plain, macOk } = sopsOpen(doc, cluster.keyFile);
      expect(macOk).toBe(true);
      for (const [key, value] of Object.entries(plain.stringData)) {
        expect(credentials).toContainEqual({
          namespace: plain.metadata.namespace,
          name: plain.metadata.name,
          key,
          value,
        });
      }
    }
    const rules = parse(readFileSync(join(repo, '.sops.yaml'), 'utf8')).creation_rules;
    expect(rules[0]).toEqual({
      path_regex: '^(?:clusters/sops-prod/apps|clusters/sops-prod/database)/[^/]+\\.ya?ml$',
      encrypted_regex: '^(data|stringData)$',
      age: cluster.recipient,
    });
    expect(summary.repo_files).toEqual(['.sops.yaml']);
    const sync = yamlObjects(join(repo, 'clusters/sops-prod/flux-system/gotk-sync.yaml')).filter(
      (o) => o.kind === 'Kustomization',
    );
    const decryption = Object.fromEntries(sync.map((k) => [k.metadata.name, k.spec.decryption]));
    expect(decryption.apps).toEqual({ provider: 'sops', secretRef: { name: 'sops-age' } });
    expect(decryption.database).toEqual({ provider: 'sops', secretRef: { name: 'sops-age' } });
    expect(decryption.infrastructure).toBeUndefined();
    for (const k of sync) kustomize(join(repo, k.spec.path));
    const text = Object.values(readTree(repo)).join('\n');
    for (const p of withBase64(SHIPPED_PLANTED)) expect(text).not.toContain(p);
    for (const c of credentials.filter((c) => c.key !== 'database')) expect(text).not.toContain(c.value);
    expect(text).not.toContain('AGE-SECRET-KEY');
  });

  it('is idempotent for the same recipients, re-encrypts for new ones, and keeps other .sops.yaml rules', async () => {
    const repo = tempDir('sops-idem');
    await generate(options(repo, { pass: 'infra' }));
    await generate(options(repo));
    const again = await generate(options(repo));
    expect(again.summary.paths_written).toEqual([]);
    expect(again.summary.objects_sealed.every((o) => o.reused)).toBe(true);
    const other = ageIdentity();
    const moved = await generate(options(repo, { ageRecipients: [cluster.recipient, other.recipient] }));
    expect(moved.summary.objects_sealed.every((o) => !o.reused)).toBe(true);
    const [doc] = yamlObjects(join(repo, 'clusters/sops-prod/database/postgresql-credentials.yaml'));
    expect(sopsOpen({ ...doc, sops: { ...doc.sops, age: [doc.sops.age[1]] } }, other.keyFile).macOk).toBe(true);
    await generate(options(repo, { clusterName: 'sops-two', domain: 'two.example.com', pass: 'infra' }));
    await generate(options(repo, { clusterName: 'sops-two', domain: 'two.example.com' }));
    const rules = parse(readFileSync(join(repo, '.sops.yaml'), 'utf8')).creation_rules.map((r: any) => r.path_regex);
    expect(rules).toEqual([
      '^(?:clusters/sops-two/apps|clusters/sops-two/database)/[^/]+\\.ya?ml$',
      '^(?:clusters/sops-prod/apps|clusters/sops-prod/database)/[^/]+\\.ya?ml$',
    ]);
  });

  it('refuses a full pass without or with a malformed age recipient, writing nothing', async () => {
    const repo = tempDir('sops-bad');
    await expect(generate(options(repo, { ageRecipients: [] }))).rejects.toThrow(GeneratorInputError);
    await expect(generate(options(repo, { ageRecipients: ['AGE-SECRET-KEY-1QQQ'] }))).rejects.toThrow(
      /--age-recipient must be an age public key/,
    );
    expect(allFiles(repo)).toEqual([]);
    expect(existsSync(join(repo, '.sops.yaml'))).toBe(false);
  });
});
