import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { generate, GenerateOptions, GeneratorInputError, SHIPPED_TEMPLATE } from '#libs/generator';
import { sopsEncrypt } from '#libs/sealing/sops';
import { makeRsaCert } from '../support/certs';
import { readTree, tempDir, yamlObjects } from '../support/files';
import { SHIPPED_PLANTED } from '../support/planted';
import { addSopsDecryption, ageIdentity, sopsOpen } from '../support/sops-open';
import { unsealManifest } from '../support/unseal';

const DB = 'clusters/development/database';
const URL_TEMPLATE =
  'postgres://{{data/postgresql-credentials/username}}:{{data/postgresql-credentials/password}}@postgresql.data.svc:5432/platform';

/**
 * A reference that commits its Secrets SOPS-encrypted (for the reference cluster's age key, which the
 * generator never gets): key names are readable, values are not. Generated keys need no decryption;
 * values built from others and configuration come from templates the reference declares.
 */
async function writeSopsReference(root: string, opts: { templates: boolean }) {
  cpSync(SHIPPED_TEMPLATE, root, { recursive: true });
  const referenceCluster = ageIdentity();
  const encrypt = async (rel: string, annotations?: Record<string, string>) => {
    const doc = parse(readFileSync(join(root, rel), 'utf8'));
    if (annotations) doc.metadata.annotations = annotations;
    writeFileSync(join(root, rel), stringify(await sopsEncrypt(doc, { recipients: [referenceCluster.recipient] })));
  };
  await encrypt(
    `${DB}/postgresql-credentials.yaml`,
    opts.templates
      ? { 'gitops-scaffolder.io/template.url': URL_TEMPLATE, 'gitops-scaffolder.io/template.database': 'platform' }
      : undefined,
  );
  await encrypt(`${DB}/rabbitmq-credentials.yaml`);
  await encrypt('clusters/development/apps/registry-credentials.yaml');
  // The reference's own Flux setting for its SOPS files.
  addSopsDecryption(join(root, 'clusters/development/flux-system/gotk-sync.yaml'), './clusters/development/database');
}

describe('generator on a SOPS-encrypted reference environment', () => {
  const cert = makeRsaCert();
  const registry = { server: 'registry.example.net', username: 'puller', password: 'RegistryPassword-0123456789' };
  const options = (repoDir: string, templateDir: string, extra: Partial<GenerateOptions> = {}): GenerateOptions => ({
    repoDir,
    templateDir,
    clusterName: 'enc',
    domain: 'enc.example.com',
    region: 'eu-west-1',
    acmeEmail: 'ops@enc.example.com',
    pass: 'full',
    registry,
    ...extra,
  });
  const databaseSync = (repo: string) =>
    yamlObjects(join(repo, 'clusters/enc/flux-system/gotk-sync.yaml')).find(
      (o) => o.kind === 'Kustomization' && o.metadata.name === 'database',
    );

  it('refuses an encrypted value it would have to read, naming the key and the annotation that fixes it', async () => {
    const template = tempDir('sops-ref-bare');
    await writeSopsReference(template, { templates: false });
    const repo = tempDir('sops-ref-bare-out');
    // Refused in the infra pass already: nothing is pushed for a run whose full pass could not be made.
    for (const pass of ['infra', 'full'] as const) {
      const run = generate(
        options(repo, template, { pass, sealingCertPem: pass === 'full' ? cert.certPem : undefined }),
      );
      await expect(run).rejects.toThrow(GeneratorInputError);
      await expect(run).rejects.toThrow(/key database .*gitops-scaffolder\.io\/template\.database/);
    }
  });

  describe('with templates for what is built from other values', () => {
    const template = tempDir('sops-ref');
    beforeAll(() => writeSopsReference(template, { templates: true }));

    /** Neither the reference's encrypted values nor the dev values under them reach the new cluster. */
    const expectNoReferenceValue = (repo: string) => {
      const text = Object.values(readTree(join(repo, 'clusters/enc'))).join('\n');
      const referenceEncrypted =
        Object.values(readTree(template))
          .join('\n')
          .match(/ENC\[AES256_GCM,data:[^,]+/g) ?? [];
      expect(referenceEncrypted.length).toBeGreaterThan(5);
      for (const value of referenceEncrypted) expect(text).not.toContain(value);
      for (const planted of SHIPPED_PLANTED) expect(text).not.toContain(planted);
    };

    it('sealed backend: fresh values, the URL rebuilt from them, configuration from its template, no decryption left', async () => {
      const repo = tempDir('sops-ref-sealed');
      await generate(options(repo, template, { pass: 'infra' }));
      const { summary } = await generate(options(repo, template, { sealingCertPem: cert.certPem }));
      const pg = unsealManifest(
        cert.privateKeyPem,
        yamlObjects(join(repo, 'clusters/enc/database/postgresql-credentials.yaml'))[0],
      );
      const url = new URL(pg.url);
      expect([decodeURIComponent(url.username), decodeURIComponent(url.password), url.host, url.pathname]).toEqual([
        pg.username,
        pg.password,
        'postgresql.data.svc:5432',
        '/platform',
      ]);
      expect(pg.password).toMatch(/^[A-Za-z0-9]{40}$/);
      expect(pg.database).toBe('platform');
      const plan = summary.credential_plan.filter((e) => e.name === 'postgresql-credentials');
      expect(plan.map((e) => [e.key, e.class])).toEqual([
        ['database', 'derived'],
        ['password', 'generated'],
        ['url', 'derived'],
        ['username', 'generated'],
      ]);
      expect(
        JSON.parse(
          unsealManifest(cert.privateKeyPem, yamlObjects(join(repo, 'clusters/enc/apps/registry-credentials.yaml'))[0])[
            '.dockerconfigjson'
          ],
        ).auths['registry.example.net'].username,
      ).toBe('puller');
      expect(databaseSync(repo).spec.decryption).toBeUndefined();
      expectNoReferenceValue(repo);
    });

    it('SOPS backend: encrypted for the new cluster only, opened with its identity, decryption pointed at sops-age', async () => {
      const newCluster = ageIdentity();
      const repo = tempDir('sops-ref-sops');
      const sops = { secretsBackend: 'sops' as const, ageRecipients: [newCluster.recipient] };
      await generate(options(repo, template, { ...sops, pass: 'infra' }));
      await generate(options(repo, template, sops));
      const { plain, macOk } = sopsOpen(
        yamlObjects(join(repo, 'clusters/enc/database/postgresql-credentials.yaml'))[0],
        newCluster.keyFile,
      );
      expect(macOk).toBe(true);
      const url = new URL(plain.stringData.url);
      expect([decodeURIComponent(url.username), decodeURIComponent(url.password)]).toEqual([
        plain.stringData.username,
        plain.stringData.password,
      ]);
      expect(databaseSync(repo).spec.decryption).toEqual({ provider: 'sops', secretRef: { name: 'sops-age' } });
      expectNoReferenceValue(repo);
    });
  });
});
