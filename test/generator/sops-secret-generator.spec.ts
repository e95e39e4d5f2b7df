import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { decryptSops } from 'sops-age';
import {
  generate,
  GenerateOptions,
  GeneratorInputError,
  SHIPPED_SOPS_TEMPLATE,
  SHIPPED_TEMPLATE,
} from '#libs/generator';
import { sopsEncryptFile } from '#libs/sealing/sops';
import { makeRsaCert } from '../support/certs';
import { kustomize, readTree, tempDir, writeTree, yamlObjects } from '../support/files';
import { exampleFirstPass, writeFluxExampleReference } from '../support/flux-example-repo';
import { addSopsDecryption, ageIdentity, sopsDocument, sopsOpen } from '../support/sops-open';
import { unsealManifest } from '../support/unseal';

/** The reference's values, encrypted for the reference cluster: none may reach the new cluster. */
const REFERENCE = {
  env: { DB_USER: 'ustagingdb', DB_PASSWORD: 'staging-db-password-0123', DATABASE_URL: 'postgres://x' },
  config: { database: { user: 'ustagingcfg', password: 'staging-cfg-password-0123' }, smtp_password: 'staging-smtp' },
  token: 'staging-webhook-token-0123456789\n',
};
const SMTP = 'smtp-password-from-the-provider';
/** A generator's `files:` entry is a whole file: supplied, never a random string. */
const TOKEN_FILE = 'webhook-token-from-the-sender\n';
const SECRETS = 'apps/staging/secrets';

/**
 * Flux's documented pattern (kustomize-controller's "Kustomize secretGenerator" decryption): a
 * generator over an encrypted dotenv (`envs:`), an encrypted YAML file and an encrypted binary file
 * (`files:`), a Deployment naming the generated Secrets (kustomize rewrites the names to the hashed
 * ones), the Kustomization decrypting with sops. A `*.yaml.example` beside the platform declares
 * how DATABASE_URL is built, since its value is encrypted.
 */
async function writeReference(root: string) {
  writeFluxExampleReference(root, { secret: true });
  const referenceCluster = ageIdentity();
  const enc = (content: any, format: 'dotenv' | 'yaml' | 'binary') =>
    sopsEncryptFile(content, format, { recipients: [referenceCluster.recipient] });
  rmSync(join(root, SECRETS, 'redis-auth.yaml'));
  writeTree(root, {
    [`${SECRETS}/kustomization.yaml`]: stringify({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      namespace: 'podinfo',
      resources: ['worker.yaml'],
      secretGenerator: [
        { name: 'podinfo-env', envs: ['podinfo.enc.env'] },
        {
          name: 'podinfo-config',
          files: ['config.yaml=config.enc.yaml', 'token=token.encrypted'],
          options: { disableNameSuffixHash: true, labels: { app: 'podinfo' } },
        },
      ],
    }),
    [`${SECRETS}/worker.yaml`]: stringify({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'worker' },
      spec: {
        selector: { matchLabels: { app: 'worker' } },
        template: {
          metadata: { labels: { app: 'worker' } },
          spec: {
            containers: [
              {
                name: 'worker',
                image: 'ghcr.io/stefanprodan/podinfo:6.7.0',
                envFrom: [{ secretRef: { name: 'podinfo-env' } }],
              },
            ],
            volumes: [{ name: 'config', secret: { secretName: 'podinfo-config' } }],
          },
        },
      },
    }),
    'bootstrap/secret-templates/podinfo-env.yaml.example': stringify({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'podinfo-env',
        namespace: 'podinfo',
        annotations: {
          'gitops-scaffolder.io/template.DATABASE_URL':
            'postgres://{{podinfo/podinfo-env/DB_USER}}:{{podinfo/podinfo-env/DB_PASSWORD}}@db.podinfo:5432/podinfo',
        },
      },
      stringData: { DB_USER: '<user>', DB_PASSWORD: '<password>', DATABASE_URL: '<url>' },
    }),
  });
  writeFileSync(join(root, SECRETS, 'podinfo.enc.env'), await enc(REFERENCE.env, 'dotenv'));
  writeFileSync(join(root, SECRETS, 'config.enc.yaml'), await enc(REFERENCE.config, 'yaml'));
  writeFileSync(join(root, SECRETS, 'token.encrypted'), await enc(Buffer.from(REFERENCE.token), 'binary'));
  addSopsDecryption(join(root, 'clusters/staging/apps.yaml'), './apps/staging/secrets');
}

describe("secretGenerator over SOPS files (Flux's documented pattern), Flux example layout", () => {
  const reference = tempDir('sg-reference');
  beforeAll(() => writeReference(reference));
  const options = (repoDir: string, extra: Partial<GenerateOptions> = {}) =>
    exampleFirstPass(repoDir, reference, {
      suppliedCredentials: {
        'podinfo/podinfo-config/config.yaml:smtp_password': SMTP,
        'podinfo/podinfo-config/token': TOKEN_FILE,
      },
      ...extra,
    });
  const bothPasses = async (extra: Partial<GenerateOptions>) => {
    const repo = tempDir('sg-fleet');
    cpSync(reference, repo, { recursive: true });
    await generate(options(repo, extra));
    const full = await generate(options(repo, { ...extra, pass: 'full' }));
    return { repo, full };
  };
  /** Nothing of the reference's values, in clear or encrypted, is in the new cluster's folder. */
  const expectNothingOfTheReference = (repo: string) => {
    const text = Object.values(readTree(join(repo, 'apps/acme'))).join('\n');
    const encrypted =
      Object.values(readTree(join(reference, SECRETS)))
        .join('\n')
        .match(/ENC\[AES256_GCM,data:[^,]{8,}/g) ?? [];
    expect(encrypted.length).toBeGreaterThan(6);
    for (const value of encrypted) expect(text).not.toContain(value);
    for (const value of [
      'staging-db-password-0123',
      'staging-cfg-password-0123',
      'staging-webhook-token',
      'staging-smtp',
    ])
      expect(text).not.toContain(value);
  };

  it('plans every key of every generator by the same classes as Secrets (templates from *.yaml.example, supplied by name)', async () => {
    const { full } = await bothPasses({ secretsBackend: 'sops', ageRecipients: [ageIdentity().recipient] });
    const plan = full.summary.credential_plan.filter((e) => e.namespace === 'podinfo' && e.name.startsWith('podinfo-'));
    expect(plan.map((e) => [e.name, e.key, e.class])).toEqual([
      ['podinfo-config', 'config.yaml:database.password', 'generated'],
      ['podinfo-config', 'config.yaml:database.user', 'generated'],
      ['podinfo-config', 'config.yaml:smtp_password', 'supplied'],
      ['podinfo-config', 'token', 'supplied'],
      ['podinfo-env', 'DATABASE_URL', 'derived'],
      ['podinfo-env', 'DB_PASSWORD', 'generated'],
      ['podinfo-env', 'DB_USER', 'generated'],
    ]);
  });

  it('SOPS backend: each file encrypted again in its own format for the new cluster, fresh values, a .sops.yaml rule for exactly those files', async () => {
    const cluster = ageIdentity();
    const secretKey = readFileSync(cluster.keyFile, 'utf8').match(/^AGE-SECRET-KEY-\S+$/m)![0];
    const { repo, full } = await bothPasses({ secretsBackend: 'sops', ageRecipients: [cluster.recipient] });
    const dir = join(repo, 'apps/acme/secrets');
    const open = async (file: string, format: 'dotenv' | 'yaml' | 'binary') => {
      const text = readFileSync(join(dir, file), 'utf8');
      const { plain, macOk } = sopsOpen(sopsDocument(text, format), cluster.keyFile);
      expect(macOk).toBe(true);
      const fileType = format === 'dotenv' ? 'env' : format === 'binary' ? 'json' : 'yaml';
      const { sops: _sops, ...npm } = { sops: undefined, ...(await decryptSops(text, { secretKey, fileType })) };
      const { sops: _meta, ...values } = plain;
      expect(npm).toEqual(values);
      return values;
    };
    const env = await open('podinfo.enc.env', 'dotenv');
    const config = await open('config.enc.yaml', 'yaml');
    const token = await open('token.encrypted', 'binary');
    expect(env.DB_PASSWORD).toMatch(/^[A-Za-z0-9]{40}$/);
    expect(env.DB_USER).toMatch(/^u[a-z0-9]{15}$/);
    expect(env.DATABASE_URL).toBe(`postgres://${env.DB_USER}:${env.DB_PASSWORD}@db.podinfo:5432/podinfo`);
    expect(config.database.password).toMatch(/^[A-Za-z0-9]{40}$/);
    expect(config.database.password).not.toBe(env.DB_PASSWORD);
    expect(config.smtp_password).toBe(SMTP);
    expect(token.data).toBe(TOKEN_FILE);
    expectNothingOfTheReference(repo);

    // The kustomization is the reference's: kustomize still hashes podinfo-env and the Deployment follows it.
    expect(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')).toBe(
      readFileSync(join(reference, SECRETS, 'kustomization.yaml'), 'utf8'),
    );
    const built = kustomize(dir);
    const envSecret = built.find((o) => o.kind === 'Secret' && o.metadata.name.startsWith('podinfo-env-'));
    const worker = built.find((o) => o.kind === 'Deployment');
    expect(worker.spec.template.spec.containers[0].envFrom[0].secretRef.name).toBe(envSecret.metadata.name);
    expect(built.find((o) => o.kind === 'Secret' && o.metadata.name === 'podinfo-config').metadata.labels).toEqual({
      app: 'podinfo',
    });

    const rules = parse(readFileSync(join(repo, '.sops.yaml'), 'utf8')).creation_rules;
    expect(rules[0]).toEqual({
      path_regex:
        '^(?:apps/acme/secrets/config\\.enc\\.yaml|apps/acme/secrets/podinfo\\.enc\\.env|apps/acme/secrets/token\\.encrypted)$',
      age: cluster.recipient,
    });
    for (const file of ['config.enc.yaml', 'podinfo.enc.env', 'token.encrypted'])
      expect(new RegExp(rules[0].path_regex).test(`apps/acme/secrets/${file}`)).toBe(true);
    const secretsKustomization = yamlObjects(join(repo, 'clusters/acme/apps.yaml')).find(
      (o) => o.metadata.name === 'app-secrets',
    );
    expect(secretsKustomization.spec.decryption).toEqual({ provider: 'sops', secretRef: { name: 'sops-age' } });
    expect(full.summary.objects_sealed.find((o) => o.name === 'podinfo-env')?.sources).toEqual([
      'apps/acme/secrets/podinfo.enc.env',
    ]);

    // A second run keeps the files (same recipients) and writes nothing.
    const again = await generate(
      options(repo, { secretsBackend: 'sops', ageRecipients: [cluster.recipient], pass: 'full' }),
    );
    expect(again.summary.paths_written).toEqual([]);
  });

  it('sealed backend: a SealedSecret of the same name, namespace, type and labels replaces each generator and its files; names keep working', async () => {
    const cert = makeRsaCert();
    const { repo, full } = await bothPasses({ sealingCertPem: cert.certPem });
    const dir = join(repo, 'apps/acme/secrets');
    for (const file of ['podinfo.enc.env', 'config.enc.yaml', 'token.encrypted'])
      expect(existsSync(join(dir, file))).toBe(false);
    const k = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8'));
    expect(k.secretGenerator).toBeUndefined();
    expect(k.resources).toEqual(['worker.yaml', 'podinfo-env.sealedsecret.yaml', 'podinfo-config.sealedsecret.yaml']);
    const built = kustomize(dir);
    expect(built.filter((o) => o.kind === 'Secret')).toEqual([]);
    const sealed = (name: string) => built.find((o) => o.kind === 'SealedSecret' && o.metadata.name === name);
    expect(sealed('podinfo-env').metadata.namespace).toBe('podinfo');
    const env = unsealManifest(cert.privateKeyPem, sealed('podinfo-env'));
    expect(env.DATABASE_URL).toBe(`postgres://${env.DB_USER}:${env.DB_PASSWORD}@db.podinfo:5432/podinfo`);
    const config = unsealManifest(cert.privateKeyPem, sealed('podinfo-config'));
    expect(parse(config['config.yaml'])).toEqual({
      database: {
        user: expect.stringMatching(/^u[a-z0-9]{15}$/),
        password: expect.stringMatching(/^[A-Za-z0-9]{40}$/),
      },
      smtp_password: SMTP,
    });
    expect(config.token).toBe(TOKEN_FILE);
    expect(sealed('podinfo-config').spec.template.metadata.labels).toEqual({ app: 'podinfo' });
    // Without a generator kustomize leaves the name as written: the Deployment names the unsealed Secret.
    const worker = built.find((o) => o.kind === 'Deployment');
    expect(worker.spec.template.spec.containers[0].envFrom[0].secretRef.name).toBe('podinfo-env');
    expect(full.summary.warnings.join('\n')).toMatch(
      /secretGenerator podinfo-env is replaced by SealedSecret podinfo\/podinfo-env/,
    );
    expectNothingOfTheReference(repo);
    const again = await generate(options(repo, { sealingCertPem: cert.certPem, pass: 'full' }));
    expect(again.summary.paths_written).toEqual([]);
  });

  it.each([
    [
      'literals',
      { name: 'plain', literals: ['password=hunter2'] },
      /secretGenerator plain builds a plaintext Secret from literals/,
    ],
    [
      'a plaintext dotenv',
      { name: 'plain', envs: ['plain.env'] },
      /secretGenerator plain builds a plaintext Secret from plain\.env, which is not SOPS-encrypted/,
    ],
  ])('refuses a generator over %s, naming the file and what to do', async (_title, entry, message) => {
    const root = tempDir('sg-plain');
    cpSync(reference, root, { recursive: true });
    writeFileSync(join(root, SECRETS, 'plain.env'), 'password=hunter2\n');
    const kfile = join(root, SECRETS, 'kustomization.yaml');
    const k = parse(readFileSync(kfile, 'utf8'));
    k.secretGenerator.push(entry);
    writeFileSync(kfile, stringify(k));
    const run = generate(options(tempDir('sg-plain-out'), { templateDir: root }));
    await expect(run).rejects.toThrow(GeneratorInputError);
    await expect(run).rejects.toThrow(message);
    await expect(run).rejects.toThrow(/apps\/staging\/secrets\/kustomization\.yaml/);
  });
});

describe('secretGenerator over an encrypted dotenv in the cluster folder, cluster-vars layout (shipped sops-platform)', () => {
  const reference = tempDir('sg-vars-reference');
  const WEBHOOK = { HOOK_TOKEN: 'dev-hook-token-0123456789', SIGNING_KEY: 'dev-signing-key-0123456789' };
  const HOOK_TOKEN = 'hook-token-the-sender-was-given-0a0a';
  beforeAll(async () => {
    cpSync(SHIPPED_SOPS_TEMPLATE, reference, { recursive: true });
    const dir = join(reference, 'clusters/dev/secrets');
    const k = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8'));
    k.secretGenerator = [{ name: 'api-webhook', namespace: 'apps', envs: ['webhook.sops.env'] }];
    k.generatorOptions = { disableNameSuffixHash: true };
    writeFileSync(join(dir, 'kustomization.yaml'), stringify(k));
    const devCluster = ageIdentity();
    writeFileSync(
      join(dir, 'webhook.sops.env'),
      await sopsEncryptFile(WEBHOOK, 'dotenv', { recipients: [devCluster.recipient] }),
    );
  });
  const options = (repoDir: string, extra: Partial<GenerateOptions>): GenerateOptions => ({
    repoDir,
    templateDir: reference,
    referenceEnv: 'dev',
    clusterName: 'acme',
    domain: 'acme.example.com',
    region: 'eu-west-1',
    acmeEmail: 'ops@acme.example.com',
    pass: 'full',
    registry: { server: 'registry.shop.example.org', username: 'acme-puller', password: 'AcmeRegistryPassword-0a0a0a' },
    // A token is another system's (the sender signs with it): supplied; a signing key is the cluster's own.
    suppliedCredentials: {
      'cert-manager/cloudflare-api-token/api-token': 'CloudflareTokenForAcme-4d4d4d4d4d',
      'apps/api-webhook/HOOK_TOKEN': HOOK_TOKEN,
    },
    ...extra,
  });
  const bothPasses = async (extra: Partial<GenerateOptions>) => {
    const repo = tempDir('sg-vars-fleet');
    await generate(options(repo, { ...extra, pass: 'infra' }));
    // The infra pass leaves the cluster's secrets for the full pass.
    expect(existsSync(join(repo, 'clusters/acme/secrets'))).toBe(false);
    const full = await generate(options(repo, extra));
    return { repo, full };
  };

  it('SOPS backend: the dotenv encrypted again for the new cluster with fresh and supplied values', async () => {
    const cluster = ageIdentity();
    const { repo, full } = await bothPasses({ secretsBackend: 'sops', ageRecipients: [cluster.recipient] });
    const text = readFileSync(join(repo, 'clusters/acme/secrets/webhook.sops.env'), 'utf8');
    const { plain, macOk } = sopsOpen(sopsDocument(text, 'dotenv'), cluster.keyFile);
    expect(macOk).toBe(true);
    expect(plain.HOOK_TOKEN).toBe(HOOK_TOKEN);
    expect(plain.SIGNING_KEY).toMatch(/^[A-Za-z0-9]{40}$/);
    for (const value of Object.values(WEBHOOK)) expect(text).not.toContain(value);
    expect(
      full.summary.credential_plan.filter((e) => e.name === 'api-webhook').map((e) => [e.namespace, e.key, e.class]),
    ).toEqual([
      ['apps', 'HOOK_TOKEN', 'supplied'],
      ['apps', 'SIGNING_KEY', 'generated'],
    ]);
    const rules = parse(readFileSync(join(repo, '.sops.yaml'), 'utf8')).creation_rules;
    expect(rules[0].path_regex).toBe('^clusters/acme/secrets/webhook\\.sops\\.env$');
    expect(rules[0].encrypted_regex).toBeUndefined();
    expect(rules[1].encrypted_regex).toBe('^(data|stringData)$');
  });

  it('sealed backend: a SealedSecret api-webhook in namespace apps, opened with the private key', async () => {
    const cert = makeRsaCert();
    const { repo } = await bothPasses({ sealingCertPem: cert.certPem });
    const dir = join(repo, 'clusters/acme/secrets');
    expect(existsSync(join(dir, 'webhook.sops.env'))).toBe(false);
    const sealed = kustomize(dir).find((o) => o.kind === 'SealedSecret' && o.metadata.name === 'api-webhook');
    expect(sealed.metadata.namespace).toBe('apps');
    const values = unsealManifest(cert.privateKeyPem, sealed);
    expect(Object.keys(values).sort()).toEqual(['HOOK_TOKEN', 'SIGNING_KEY']);
    expect(values.HOOK_TOKEN).toBe(HOOK_TOKEN);
  });
});

describe('secretGenerator over an encrypted JSON file in a layer, overlay layout (shipped platform)', () => {
  const reference = tempDir('sg-overlay-reference');
  const LAYER = 'clusters/development/database';
  const ACCESS_KEY = 'access-key-from-the-store-0b0b';
  beforeAll(async () => {
    cpSync(SHIPPED_TEMPLATE, reference, { recursive: true });
    const k = parse(readFileSync(join(reference, LAYER, 'kustomization.yaml'), 'utf8'));
    k.secretGenerator = [{ name: 'backup-target', namespace: 'data', files: ['target.json=backup.enc.json'] }];
    writeFileSync(join(reference, LAYER, 'kustomization.yaml'), stringify(k));
    const devCluster = ageIdentity();
    const plain = {
      bucket_unencrypted: 'dev-backups',
      access_key: 'dev-access-key-0123',
      secret: 'dev-secret-0123456789',
    };
    writeFileSync(
      join(reference, LAYER, 'backup.enc.json'),
      await sopsEncryptFile(plain, 'json', { recipients: [devCluster.recipient] }),
    );
  });
  const options = (repoDir: string, extra: Partial<GenerateOptions>): GenerateOptions => ({
    repoDir,
    templateDir: reference,
    clusterName: 'enc',
    domain: 'enc.example.com',
    region: 'eu-west-1',
    acmeEmail: 'ops@enc.example.com',
    pass: 'full',
    registry: { server: 'registry.example.net', username: 'puller', password: 'RegistryPassword-0123456789' },
    // An object store's access key is issued by the store: supplied; the secret beside it is generated.
    suppliedCredentials: { 'data/backup-target/target.json:access_key': ACCESS_KEY },
    ...extra,
  });

  it.each([
    ['SOPS', true],
    ['sealed', false],
  ])(
    '%s backend: the file regenerated (its clear keys kept, the access key supplied), the layer builds',
    async (_title, sops) => {
      const cluster = ageIdentity();
      const cert = makeRsaCert();
      const backend = sops
        ? { secretsBackend: 'sops' as const, ageRecipients: [cluster.recipient] }
        : { sealingCertPem: cert.certPem };
      const repo = tempDir('sg-overlay-fleet');
      await generate(options(repo, { ...backend, pass: 'infra' }));
      await generate(options(repo, backend));
      const dir = join(repo, 'clusters/enc/database');
      const json = sops
        ? sopsOpen(sopsDocument(readFileSync(join(dir, 'backup.enc.json'), 'utf8'), 'json'), cluster.keyFile).plain
        : JSON.parse(
            unsealManifest(
              cert.privateKeyPem,
              kustomize(dir).find((o) => o.kind === 'SealedSecret' && o.metadata.name === 'backup-target'),
            )['target.json'],
          );
      expect(json.bucket_unencrypted).toBe('dev-backups');
      expect(json.secret).toMatch(/^[A-Za-z0-9]{40}$/);
      expect(json.access_key).toBe(ACCESS_KEY);
    },
  );
});
