import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  generate,
  GenerateOptions,
  GeneratorInputError,
  GeneratorValidationError,
  SHIPPED_TEMPLATE,
} from '#libs/generator';
import { makeRsaCert } from '../support/certs';
import { allFiles, kustomize, readTree, tempDir, yamlObjects } from '../support/files';
import { unsealManifest } from '../support/unseal';
import { SHIPPED_PLANTED, withBase64 } from '../support/planted';

const PLANTED = SHIPPED_PLANTED;
const PLANTED_B64 = withBase64(PLANTED).filter((v) => !PLANTED.includes(v));

const registry = { server: 'registry.acme.io', username: 'acme-puller', password: 'RegistryPw-0123456789abcdef' };

function options(repoDir: string, extra: Partial<GenerateOptions> = {}): GenerateOptions {
  return {
    repoDir,
    clusterName: 'acme-prod',
    domain: 'acme.io',
    region: 'us-east-1',
    acmeEmail: 'ops@acme.io',
    pass: 'infra',
    // Both passes: the infra pass rehearses the full pass, whose pull secret needs them.
    registry,
    ...extra,
  };
}

describe('generator on the shipped reference template', () => {
  const cert = makeRsaCert();
  const full = (repo: string, extra: Partial<GenerateOptions> = {}) =>
    generate(options(repo, { pass: 'full', sealingCertPem: cert.certPem, ...extra }));

  it('ships a template whose every layer builds and which plants plaintext dev credentials', async () => {
    for (const layer of ['flux-system', 'infrastructure', 'apps', 'database', 'cert-manager-config']) {
      expect(kustomize(join(SHIPPED_TEMPLATE, 'clusters/development', layer)).length).toBeGreaterThan(0);
    }
    const text = Object.values(readTree(SHIPPED_TEMPLATE)).join('\n');
    expect(text).toContain('DevPgPassw0rd-Insecure-2024');
  });

  it('infra pass: flux-system and infrastructure only, no secret, external-dns repointed, the rest byte for byte', async () => {
    const repo = tempDir('infra');
    const { summary } = await generate(options(repo));
    const files = allFiles(repo);
    expect(files.every((f) => f.startsWith('clusters/acme-prod/'))).toBe(true);
    expect(files.some((f) => /\/(apps|database|cert-manager-config)\//.test(f))).toBe(false);
    const text = Object.values(readTree(repo)).join('\n');
    expect(text).not.toMatch(/kind: (Secret|SealedSecret)/);
    for (const p of PLANTED) expect(text).not.toContain(p);

    const sync = yamlObjects(join(repo, 'clusters/acme-prod/flux-system/gotk-sync.yaml'));
    const kustomizations = sync.filter((o) => o.kind === 'Kustomization');
    expect(kustomizations.map((k) => k.metadata.name).sort()).toEqual(['flux-system', 'infrastructure']);
    for (const k of kustomizations) {
      expect(k.spec.dependsOn).toBeUndefined();
      expect(existsSync(join(repo, k.spec.path))).toBe(true);
      kustomize(join(repo, k.spec.path));
    }

    const infraRef = join(SHIPPED_TEMPLATE, 'clusters/development/infrastructure');
    for (const f of allFiles(infraRef).filter((f) => f !== 'external-dns.yaml')) {
      expect(readFileSync(join(repo, 'clusters/acme-prod/infrastructure', f), 'utf8')).toBe(
        readFileSync(join(infraRef, f), 'utf8'),
      );
    }
    const dns = yamlObjects(join(repo, 'clusters/acme-prod/infrastructure/external-dns.yaml'))[0];
    expect(dns.spec.values.domainFilters).toEqual(['acme.io']);
    expect(dns.spec.values.txtOwnerId).toBe('acme-prod');
    expect(dns.spec.values.env).toEqual([{ name: 'AWS_DEFAULT_REGION', value: 'us-east-1' }]);
    expect(readFileSync(join(repo, 'clusters/acme-prod/infrastructure/external-dns.yaml'), 'utf8')).toContain(
      "# Only records below the cluster's own zone are managed.",
    );
    expect(summary.external_dns[0]).toMatchObject({
      domain_filters: ['acme.io'],
      region: 'us-east-1',
      txt_owner_id: 'acme-prod',
    });
    expect(summary.validated).toEqual(
      expect.arrayContaining(['clusters/acme-prod/infrastructure', 'clusters/acme-prod/flux-system']),
    );
  });

  it('full pass: every layer builds, dependsOn infrastructure, Ingresses on the new domain, sealed fresh credentials', async () => {
    const repo = tempDir('full');
    await generate(options(repo));
    const { summary, credentials } = await full(repo);
    const sync = yamlObjects(join(repo, 'clusters/acme-prod/flux-system/gotk-sync.yaml')).filter(
      (o) => o.kind === 'Kustomization',
    );
    const byName = Object.fromEntries(sync.map((k) => [k.metadata.name, k]));
    expect(Object.keys(byName).sort()).toEqual([
      'apps',
      'cert-manager-config',
      'database',
      'flux-system',
      'infrastructure',
    ]);
    expect(byName.infrastructure.spec.dependsOn).toBeUndefined();
    for (const name of ['apps', 'database', 'cert-manager-config'])
      expect(byName[name].spec.dependsOn).toEqual([{ name: 'infrastructure' }]);
    for (const k of sync) kustomize(join(repo, k.spec.path));

    // Ingress hosts: built output, not just the patch files.
    const ingresses = kustomize(join(repo, 'clusters/acme-prod/apps')).filter((o) => o.kind === 'Ingress');
    const hosts = ingresses
      .flatMap((i) => [...i.spec.rules.map((r: any) => r.host), ...i.spec.tls.flatMap((t: any) => t.hosts)])
      .sort();
    expect(hosts).toEqual([
      'acme.io',
      'acme.io',
      'api.acme.io',
      'api.acme.io',
      'auth.acme.io',
      'auth.acme.io',
      'docs.acme.io',
      'docs.acme.io',
      'www.acme.io',
      'www.acme.io',
    ]);
    expect(allFiles(join(repo, 'clusters/acme-prod/apps/ingress-hosts'))).toHaveLength(4);
    // The shared base is copied verbatim (the target repo had none), never edited.
    expect(readTree(join(repo, 'base'))).toEqual(readTree(join(SHIPPED_TEMPLATE, 'base')));
    expect(summary.shared_paths_copied).toEqual(['base']);

    // cert-manager-config: ACME e-mail, zone and region.
    const issuers = yamlObjects(join(repo, 'clusters/acme-prod/cert-manager-config/cluster-issuers.yaml'));
    expect(issuers.map((i) => i.spec.acme.email)).toEqual(['ops@acme.io', 'ops@acme.io']);
    expect(issuers[1].spec.acme.solvers[0]).toEqual({
      dns01: { route53: { region: 'us-east-1' } },
      selector: { dnsZones: ['acme.io'] },
    });

    // No plaintext secret and no planted value anywhere in the repository.
    const text = Object.values(readTree(repo)).join('\n');
    for (const p of [...PLANTED, ...PLANTED_B64]) expect(text).not.toContain(p);
    for (const c of credentials.filter((c) => c.key !== 'database')) expect(text).not.toContain(c.value);
    for (const layer of ['apps', 'database', 'cert-manager-config', 'infrastructure']) {
      expect(kustomize(join(repo, 'clusters/acme-prod', layer)).filter((o) => o.kind === 'Secret')).toEqual([]);
    }

    // Every sealed value opens with the private key, to exactly the generated credential.
    const sealed = [
      'apps/registry-credentials.yaml',
      'database/postgresql-credentials.yaml',
      'database/rabbitmq-credentials.yaml',
    ].flatMap((f) => yamlObjects(join(repo, 'clusters/acme-prod', f)));
    expect(sealed.map((s) => `${s.metadata.namespace}/${s.metadata.name}`).sort()).toEqual([
      'data/postgresql-credentials',
      'data/rabbitmq-credentials',
      'platform/registry-credentials',
    ]);
    for (const s of sealed) {
      expect(s.kind).toBe('SealedSecret');
      const opened = unsealManifest(cert.privateKeyPem, s);
      for (const [key, value] of Object.entries(opened)) {
        expect(credentials).toContainEqual({ namespace: s.metadata.namespace, name: s.metadata.name, key, value });
      }
    }
    const pg = unsealManifest(
      cert.privateKeyPem,
      sealed.find((s) => s.metadata.name === 'postgresql-credentials'),
    );
    expect(pg.password.length).toBeGreaterThanOrEqual(32);
    expect(pg.database).toBe('platform');
    expect(pg.url).toBe(`postgres://${pg.username}:${pg.password}@postgresql.data.svc:5432/platform`);
    const docker = JSON.parse(
      unsealManifest(
        cert.privateKeyPem,
        sealed.find((s) => s.metadata.name === 'registry-credentials'),
      )['.dockerconfigjson'],
    );
    expect(docker.auths['registry.acme.io']).toEqual({
      username: 'acme-puller',
      password: registry.password,
      auth: Buffer.from(`acme-puller:${registry.password}`).toString('base64'),
    });
    expect(sealed.find((s) => s.metadata.name === 'registry-credentials').spec.template.type).toBe(
      'kubernetes.io/dockerconfigjson',
    );
  });

  it('carries nothing of one pass into the next: the reference is parsed once, and what a pass edits is its own', async () => {
    const first = tempDir('first');
    const second = tempDir('second');
    const again = tempDir('again');
    await full(first, { validate: false });
    await full(second, {
      clusterName: 'beta',
      domain: 'beta.example.org',
      acmeEmail: 'ops@beta.example.org',
      validate: false,
    });
    // The same pass for beta, after a pass for another cluster of another domain that edited its copies of the same documents.
    await full(first, {
      clusterName: 'gamma',
      domain: 'gamma.example.net',
      acmeEmail: 'ops@gamma.example.net',
      validate: false,
    });
    await full(again, {
      clusterName: 'beta',
      domain: 'beta.example.org',
      acmeEmail: 'ops@beta.example.org',
      validate: false,
    });
    // Sealed values are random each time: everything else must be the same byte for byte.
    const text = (repo: string) =>
      Object.values(readTree(repo))
        .join('\n')
        .replace(/AgB[A-Za-z0-9+/=]{100,}|AQ[A-Za-z0-9+/=]{100,}/g, 'SEALED');
    expect(text(second)).not.toMatch(/acme\.io|acme-prod|gamma/);
    expect(text(second)).toContain('beta.example.org');
    expect(text(again)).toBe(text(second));
    expect(text(first)).toContain('gamma.example.net');
  });

  it('is idempotent: the same inputs change nothing, a new certificate reseals, --rotate-credentials regenerates', async () => {
    const repo = tempDir('idem');
    await generate(options(repo));
    expect((await generate(options(repo))).summary.paths_written).toEqual([]);
    await full(repo);
    const before = readTree(repo);
    const again = await full(repo);
    expect(again.summary.paths_written).toEqual([]);
    expect(again.summary.objects_sealed.every((s) => s.reused)).toBe(true);
    expect(again.credentials).toEqual([]);
    expect(readTree(repo)).toEqual(before);
    // An infra pass after the full pass keeps the full tree referenced.
    expect((await generate(options(repo))).summary.paths_written).toEqual([]);

    const rotated = await full(repo, { rotateCredentials: true });
    expect(rotated.summary.objects_sealed.every((s) => !s.reused)).toBe(true);
    expect(rotated.summary.paths_written.sort()).toEqual([
      'clusters/acme-prod/apps/registry-credentials.yaml',
      'clusters/acme-prod/database/postgresql-credentials.yaml',
      'clusters/acme-prod/database/rabbitmq-credentials.yaml',
    ]);
    const other = makeRsaCert();
    const resealed = await full(repo, { sealingCertPem: other.certPem });
    expect(resealed.summary.objects_sealed.every((s) => !s.reused)).toBe(true);
    expect(
      unsealManifest(
        other.privateKeyPem,
        yamlObjects(join(repo, 'clusters/acme-prod/database/rabbitmq-credentials.yaml'))[0],
      ).password,
    ).toHaveLength(40);
  });

  it.each([
    ['an invalid cluster name', { clusterName: 'Acme_Prod' }, /--cluster-name/],
    ['an invalid domain', { domain: 'acme' }, /--domain/],
    ['a domain with shell metacharacters', { domain: 'acme.io;rm -rf' }, /--domain/],
    ['an invalid region', { region: 'US East' }, /--region/],
    ['an invalid e-mail', { acmeEmail: 'ops@acme.io\nkind: Secret' }, /--acme-email/],
    [
      'a missing reference environment',
      { referenceEnv: 'production' },
      /reference environment "production" does not exist/,
    ],
    ['a path as reference environment', { referenceEnv: '../../etc' }, /--reference-env/],
    ['a full pass without certificate', { pass: 'full' as const }, /sealing certificate/],
    [
      'a full pass with an expired certificate',
      {
        pass: 'full' as const,
        sealingCertPem: makeRsaCert({ notBefore: new Date(2020, 1, 1), notAfter: new Date(2021, 1, 1) }).certPem,
      },
      /expired/,
    ],
    [
      'a full pass without registry credentials',
      { pass: 'full' as const, sealingCertPem: makeRsaCert().certPem, registry: undefined },
      /REGISTRY_SERVER/,
    ],
    [
      // Before the rehearsal, this infra pass was written (and a run pushed it); its full pass then failed.
      'an infra pass whose full pass would lack registry credentials, before anything is written',
      { registry: undefined },
      /^refused before the infra pass writes anything, as the full pass that follows it would be: .*REGISTRY_SERVER/,
    ],
  ])('refuses %s and writes nothing', async (_what, extra, message) => {
    const repo = tempDir('bad');
    await expect(generate(options(repo, extra))).rejects.toThrow(GeneratorInputError);
    await expect(generate(options(repo, extra))).rejects.toThrow(message);
    expect(allFiles(repo)).toEqual([]);
  });

  it('refuses a cluster folder that belongs to another cluster or to nobody', async () => {
    const repo = tempDir('owner');
    await generate(options(repo));
    await expect(generate(options(repo, { domain: 'other.io' }))).rejects.toThrow(/belongs to another cluster/);
    const foreign = tempDir('foreign');
    cpSync(join(SHIPPED_TEMPLATE, 'clusters/development'), join(foreign, 'clusters/acme-prod'), { recursive: true });
    await expect(generate(options(foreign))).rejects.toThrow(/not written by gitops-scaffolder/);
  });

  it('records the owner in the marker and refuses another owner, naming none of the marker values', async () => {
    const repo = tempDir('owned');
    await generate(options(repo, { owner: 'team-a' }));
    const marker = () => JSON.parse(readFileSync(join(repo, 'clusters/acme-prod/.gitops-scaffolder.json'), 'utf8'));
    expect(marker()).toMatchObject({
      cluster_name: 'acme-prod',
      domain: 'acme.io',
      region: 'us-east-1',
      reference_env: 'development',
      owner: 'team-a',
      marker_version: 2,
    });
    const before = readTree(repo);
    for (const extra of [
      { owner: 'team-b' },
      { owner: 'team-b', domain: 'other.io' },
      { owner: 'team-a', region: 'eu-west-1' },
    ]) {
      const refused = await generate(options(repo, extra)).catch((e) => e);
      expect(refused).toBeInstanceOf(GeneratorInputError);
      expect(refused.message).toBe(
        'clusters/acme-prod/ belongs to another cluster or owner; refusing to write over it',
      );
    }
    expect(readTree(repo)).toEqual(before);
    // The owner itself goes on; a pass without an owner (the CLI) keeps the folder's.
    await generate(options(repo, { owner: 'team-a' }));
    await generate(options(repo));
    expect(marker().owner).toBe('team-a');
  });

  it('a marker written before owners were recorded: matching cluster values decide, and the next owner is recorded', async () => {
    const repo = tempDir('legacy-marker');
    await generate(options(repo));
    expect(
      JSON.parse(readFileSync(join(repo, 'clusters/acme-prod/.gitops-scaffolder.json'), 'utf8')).owner,
    ).toBeUndefined();
    await expect(generate(options(repo, { owner: 'team-b', domain: 'other.io' }))).rejects.toThrow(
      'belongs to another cluster or owner',
    );
    await generate(options(repo, { owner: 'team-b' }));
    expect(JSON.parse(readFileSync(join(repo, 'clusters/acme-prod/.gitops-scaffolder.json'), 'utf8')).owner).toBe(
      'team-b',
    );
    await expect(generate(options(repo, { owner: 'team-c' }))).rejects.toThrow('belongs to another cluster or owner');
  });

  it('writes nothing when a layer fails to build', async () => {
    const template = tempDir('broken-template');
    cpSync(SHIPPED_TEMPLATE, template, { recursive: true });
    writeFileSync(
      join(template, 'clusters/development/infrastructure/storage-classes.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n',
    );
    const repo = tempDir('broken');
    await expect(generate(options(repo, { templateDir: template }))).rejects.toThrow(GeneratorValidationError);
    expect(allFiles(repo)).toEqual([]);
  });
});
