import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decryptSops } from 'sops-age';
import { SHIPPED_SOPS_TEMPLATE } from '#libs/generator';
import { makeRsaCert } from '../support/certs';
import { childEnv, kustomize, readTree, tempDir, yamlObjects } from '../support/files';
import { ageIdentity, sopsOpen } from '../support/sops-open';
import { unsealManifest } from '../support/unseal';
import { CLI_REGISTRY_ENV } from '../support/generator-cli';

const BIN = join(__dirname, '../../bin/generate-gitops-env');
const TOKEN = 'CloudflareTokenForAcme-4d4d4d4d4d';
/** The development cluster's values under the template's encryption (known from how it was made). */
const DEV_VALUES = [
  'DevCloudflareToken-dns-edit-dev-zone-5b5b5b',
  'DevShopPgPassword-3c3c3c3c',
  'shop_dev',
  'DevSessionSecret-not-for-production-9d9d',
  'DevShopRegistryPass-1e1e1e',
];
const REGISTRY = {
  REGISTRY_SERVER: 'registry.shop.example.org',
  REGISTRY_USERNAME: 'acme-puller',
  REGISTRY_PASSWORD: 'AcmeRegistryPassword-0a0a0a',
};

function run(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: childEnv({ ...CLI_REGISTRY_ENV, ...env }),
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The shipped SOPS-platform template through the command line, both passes, both backends. */
describe('shipped sops-platform template (SOPS-encrypted reference, supplied DNS token) through the CLI', () => {
  const common = [
    '--template',
    SHIPPED_SOPS_TEMPLATE,
    '--reference-env',
    'dev',
    '--cluster-name',
    'acme',
    '--domain',
    'acme.example.com',
    '--region',
    'eu-west-1',
    '--acme-email',
    'ops@acme.example.com',
    // Each run writes into a folder without an origin remote: Flux's URL is given.
    '--source-url',
    'https://git.example.org/acme/fleet.git',
  ];
  const credentialsFile = join(tempDir('sops-platform-creds'), 'credentials.yaml');
  writeFileSync(credentialsFile, `cert-manager/cloudflare-api-token/api-token: ${TOKEN}\n`);
  chmodSync(credentialsFile, 0o600);
  // Both passes take it: the infra pass rehearses the full pass, which needs it.
  const token = ['--credentials', credentialsFile];

  const secret = (repo: string, file: string) => yamlObjects(join(repo, 'clusters/acme/secrets', file))[0];
  const fluxKustomization = (repo: string, file: string, name: string) =>
    yamlObjects(join(repo, file)).find((o) => o.kind === 'Kustomization' && o.metadata.name === name);

  /** Infra pass, then full pass; returns the working copy and the full pass's JSON summary. */
  function bothPasses(fullArgs: string[]) {
    const repo = tempDir('sops-platform-out');
    const infra = run(['--repo', repo, ...common, ...token, '--infra-only', '--json'], REGISTRY);
    expect(infra.stderr).toBe('');
    expect(infra.code).toBe(0);
    const infraSummary = JSON.parse(infra.stdout);
    expect(infraSummary.kustomizations.map((k: any) => k.name).sort()).toEqual(['flux-system', 'platform']);
    // The platform reads the DNS token that only the full pass brings, but without waiting for its pods: no warning.
    expect(infraSummary.warnings).toEqual([]);
    const full = run(['--repo', repo, ...common, ...fullArgs, '--credentials', credentialsFile, '--json'], REGISTRY);
    expect(full.stderr).toBe('');
    expect(full.code).toBe(0);
    return { repo, summary: JSON.parse(full.stdout) };
  }

  /** What every backend must give: the token as supplied everywhere it is used, the URL from the new database credentials. */
  function expectConsistent(values: Record<string, Record<string, string>>) {
    expect(values.certManagerToken['api-token']).toBe(TOKEN);
    expect(values.externalDnsToken['api-token']).toBe(TOKEN);
    const pg = values.postgres;
    expect(pg.password).toMatch(/^[A-Za-z0-9]{40}$/);
    expect(pg.username).toMatch(/^u[a-z0-9]{15}$/);
    expect(pg.database).toBe('shop');
    const url = new URL(values.api.DATABASE_URL);
    expect([
      decodeURIComponent(url.username),
      decodeURIComponent(url.password),
      url.host,
      url.pathname,
      url.search,
    ]).toEqual([pg.username, pg.password, 'postgresql.data.svc:5432', '/shop', '?sslmode=disable']);
    expect(values.api.SESSION_SECRET).toMatch(/^[A-Za-z0-9]{40}$/);
    expect(JSON.parse(values.registry['.dockerconfigjson']).auths['registry.shop.example.org'].username).toBe(
      'acme-puller',
    );
  }

  function expectNothingOfTheReference(repo: string) {
    const text = Object.values(readTree(repo)).join('\n');
    const referenceEncrypted = Object.values(readTree(join(SHIPPED_SOPS_TEMPLATE, 'clusters/dev/secrets')))
      .join('\n')
      .match(/ENC\[AES256_GCM,data:[^,]+/g)!;
    expect(referenceEncrypted.length).toBeGreaterThanOrEqual(7);
    for (const value of [...referenceEncrypted, ...DEV_VALUES, TOKEN, REGISTRY.REGISTRY_PASSWORD])
      expect(text).not.toContain(value);
  }

  it('plans every key: the token supplied (by the example annotation), its copy and the URL derived, the rest generated', () => {
    const r = run(['--repo', tempDir('sops-platform-plan'), ...common, ...token, '--infra-only', '--json']);
    const plan = JSON.parse(r.stdout).credential_plan.map(
      (e: any) => `${e.namespace}/${e.name}/${e.key}=${e.class}${e.recognised_by ? `(${e.recognised_by})` : ''}`,
    );
    expect(plan).toEqual([
      'apps/api-env/DATABASE_URL=derived',
      'apps/api-env/SESSION_SECRET=generated',
      'apps/registry-credentials/.dockerconfigjson=registry',
      'cert-manager/cloudflare-api-token/api-token=supplied(annotation)',
      'data/postgresql-credentials/database=derived',
      'data/postgresql-credentials/password=generated',
      'data/postgresql-credentials/username=generated',
      'external-dns/cloudflare-api-token/api-token=derived',
    ]);
  });

  it('refuses the full pass without the DNS token, naming it, and writes nothing; the infra pass too, as it rehearses it', () => {
    const repo = tempDir('sops-platform-missing');
    const early = run(['--repo', repo, ...common, '--infra-only']);
    expect(early.code).toBe(2);
    expect(early.stderr).toMatch(
      /^generate-gitops-env: refused before the infra pass writes anything, as the full pass that follows it would be: .*cert-manager\/cloudflare-api-token\/api-token/,
    );
    expect(readTree(repo)).toEqual({});
    expect(run(['--repo', repo, ...common, ...token, '--infra-only']).code).toBe(0);
    const before = readTree(repo);
    const cert = join(tempDir('sops-platform-cert'), 'cert.pem');
    writeFileSync(cert, makeRsaCert().certPem);
    const r = run(['--repo', repo, ...common, '--sealing-cert', cert], REGISTRY);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('cert-manager/cloudflare-api-token/api-token');
    expect(readTree(repo)).toEqual(before);
  });

  it('sealed-secrets backend: opened with the cluster key, consistent, the reference decryption dropped', () => {
    const cert = makeRsaCert();
    const certFile = join(tempDir('sops-platform-cert'), 'cert.pem');
    writeFileSync(certFile, cert.certPem);
    const { repo, summary } = bothPasses(['--sealing-cert', certFile]);
    expect(summary.kustomizations.map((k: any) => k.name).sort()).toEqual([
      'apps',
      'cluster-secrets',
      'flux-system',
      'platform',
    ]);
    const open = (file: string) => unsealManifest(cert.privateKeyPem, secret(repo, file));
    expectConsistent({
      certManagerToken: open('cert-manager-cloudflare.yaml'),
      externalDnsToken: open('external-dns-cloudflare.yaml'),
      postgres: open('postgresql-credentials.yaml'),
      api: open('api-env.yaml'),
      registry: open('registry-credentials.yaml'),
    });
    const secrets = fluxKustomization(repo, 'clusters/acme/secrets.yaml', 'cluster-secrets');
    expect(secrets.spec.path).toBe('./clusters/acme/secrets');
    expect(secrets.spec.decryption).toBeUndefined();
    expect(fluxKustomization(repo, 'clusters/base/apps.yaml', 'apps').spec.dependsOn).toEqual([
      { name: 'platform' },
      { name: 'cluster-secrets' },
    ]);
    // The cluster root builds as Flux's flux-system Kustomization would build it.
    const root = kustomize(join(repo, 'clusters/acme'));
    expect(root.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'cluster-vars').data.CLUSTER_DOMAIN).toBe(
      'acme.example.com',
    );
    expectNothingOfTheReference(repo);
  });

  it('SOPS backend: encrypted for the new cluster only, opened with its age identity (two independent readers), decryption pointed at sops-age', async () => {
    const newCluster = ageIdentity();
    const secretKey = readFileSync(newCluster.keyFile, 'utf8').match(/^AGE-SECRET-KEY-\S+$/m)![0];
    const { repo } = bothPasses(['--secrets-backend', 'sops', '--age-recipient', newCluster.recipient]);
    const files = [
      'cert-manager-cloudflare.yaml',
      'external-dns-cloudflare.yaml',
      'postgresql-credentials.yaml',
      'api-env.yaml',
      'registry-credentials.yaml',
    ];
    const opened: Record<string, Record<string, string>> = {};
    for (const file of files) {
      const doc = secret(repo, file);
      expect(doc.sops.age.map((a: any) => a.recipient)).toEqual([newCluster.recipient]);
      const { plain, macOk } = sopsOpen(doc, newCluster.keyFile);
      expect(macOk).toBe(true);
      // The npm reader (sops-age) checks the MAC as sops does and must read the same values.
      const byNpmReader = await decryptSops(readFileSync(join(repo, 'clusters/acme/secrets', file), 'utf8'), {
        secretKey,
        fileType: 'yaml',
      });
      expect(byNpmReader.stringData).toEqual(plain.stringData);
      opened[file] = plain.stringData;
    }
    expectConsistent({
      certManagerToken: opened['cert-manager-cloudflare.yaml'],
      externalDnsToken: opened['external-dns-cloudflare.yaml'],
      postgres: opened['postgresql-credentials.yaml'],
      api: opened['api-env.yaml'],
      registry: opened['registry-credentials.yaml'],
    });
    expect(fluxKustomization(repo, 'clusters/acme/secrets.yaml', 'cluster-secrets').spec.decryption).toEqual({
      provider: 'sops',
      secretRef: { name: 'sops-age' },
    });
    expect(readFileSync(join(repo, '.sops.yaml'), 'utf8')).toContain(newCluster.recipient);
    expectNothingOfTheReference(repo);
  });

  it('warns when a first-pass Kustomization that waits for its workloads reads a Secret of a later one', () => {
    const template = tempDir('sops-platform-waiting');
    cpSync(SHIPPED_SOPS_TEMPLATE, template, { recursive: true });
    const platform = join(template, 'clusters/base/platform.yaml');
    writeFileSync(platform, readFileSync(platform, 'utf8').replace('wait: false', 'wait: true'));
    const r = run([
      '--repo',
      tempDir('sops-platform-waiting-out'),
      '--template',
      template,
      ...common.slice(2),
      ...token,
      '--infra-only',
      '--json',
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).warnings).toContain(
      'Flux Kustomization platform goes out in the first pass but HelmRelease external-dns reads Secret external-dns/cloudflare-api-token, which cluster-secrets brings in the full pass only after platform is ready, and platform waits for its workloads: set wait: false on platform or move HelmRelease external-dns after cluster-secrets',
    );
  });
});
