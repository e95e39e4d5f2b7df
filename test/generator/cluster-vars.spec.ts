import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate, GenerateOptions, GeneratorInputError, SHIPPED_PHASED_TEMPLATE } from '#libs/generator';
import { makeRsaCert } from '../support/certs';
import { allFiles, kustomize, readTree, tempDir, writeTree, yamlObjects } from '../support/files';
import { SHIPPED_PLANTED, withBase64 } from '../support/planted';
import { SETTINGS_PLANTED, writeSettingsReference } from '../support/reference-repos';
import { ageIdentity, sopsOpen } from '../support/sops-open';
import { unsealManifest } from '../support/unseal';

const INFRA = [
  'flux-system',
  'namespaces',
  'helm-repositories',
  'storage',
  'cert-manager',
  'ingress-nginx',
  'sealed-secrets',
  'external-dns',
  'issuers',
];
const FULL_ONLY = ['cluster-secrets', 'postgresql', 'rabbitmq', 'api', 'web'];

/**
 * Flux's post-build substitution, written here independently of the production code:
 * ${NAME} and ${NAME:=default}, with $${...} left as a literal.
 */
function fluxSubstitute(text: string, vars: Record<string, string>): string {
  return text.replace(/\$\$\{|\$\{([_a-zA-Z][_a-zA-Z0-9]*)(?::[=-]([^}]*))?\}/g, (whole, name, fallback) => {
    if (!name) return '${';
    if (name in vars) return vars[name];
    if (fallback !== undefined) return fallback;
    throw new Error(`undefined variable ${name}`);
  });
}

/**
 * What the new cluster would run: its own folder built, then every Flux Kustomization it holds
 * built and, where it asks for it, substituted from the ConfigMap `varsName` and its inline values.
 */
function clusterObjects(repo: string, cluster: string, varsName = 'cluster-vars') {
  const top = kustomize(join(repo, 'clusters', cluster));
  const vars = top.find((o) => o.kind === 'ConfigMap' && o.metadata.name === varsName).data;
  const syncs = top.filter(
    (o) => o.kind === 'Kustomization' && o.apiVersion.startsWith('kustomize.toolkit.fluxcd.io/'),
  );
  const substituted = (o: any, k: any) =>
    o.metadata?.annotations?.['kustomize.toolkit.fluxcd.io/substitute'] === 'disabled'
      ? o
      : JSON.parse(fluxSubstitute(JSON.stringify(o), { ...vars, ...k.spec.postBuild.substitute }));
  const applied = syncs
    .filter((k) => k.spec.path !== `./clusters/${cluster}`)
    .flatMap((k) => kustomize(join(repo, k.spec.path)).map((o) => (k.spec.postBuild ? substituted(o, k) : o)));
  return { top, vars, syncs, applied };
}

describe('generator, cluster-vars model (shipped phased platform: clusters/base, dev, prod, platform/<component>)', () => {
  const cert = makeRsaCert();
  const options = (repoDir: string, extra: Partial<GenerateOptions> = {}): GenerateOptions => ({
    repoDir,
    templateDir: SHIPPED_PHASED_TEMPLATE,
    referenceEnv: 'dev',
    clusterName: 'acme',
    domain: 'acme.io',
    region: 'us-west-2',
    acmeEmail: 'ops@acme.io',
    pass: 'full',
    sealingCertPem: cert.certPem,
    clusterVars: {
      EXTERNAL_DNS_ROLE_ARN: 'arn:aws:iam::222222222222:role/external-dns-acme',
      CLUSTER_ISSUER: 'letsencrypt-prod',
      POSTGRES_STORAGE_SIZE: '50Gi',
    },
    registry: { server: 'registry.example.net', username: 'acme-puller', password: 'AcmeRegistryPassword-0123456789' },
    ...extra,
  });

  it('infra pass: a new cluster-vars, only the secret-free phases referenced, the shared base untouched', async () => {
    const repo = tempDir('cv-infra');
    const { summary, credentials } = await generate(options(repo, { pass: 'infra', sealingCertPem: undefined }));
    expect(summary.environment_model).toBe('cluster-vars');
    expect(credentials).toEqual([]);
    expect(summary.reference_domain).toBe('dev.example.net');
    expect(summary.cluster_vars).toMatchObject({
      CLUSTER_NAME: 'acme',
      CLUSTER_DOMAIN: 'acme.io',
      CLUSTER_REGION: 'us-west-2',
      ACME_EMAIL: 'ops@acme.io',
      CLUSTER_ISSUER: 'letsencrypt-prod',
      POSTGRES_STORAGE_SIZE: '50Gi',
      RABBITMQ_STORAGE_SIZE: '5Gi',
    });
    expect(summary.cluster_vars_inherited.sort()).toEqual([
      'API_REPLICAS',
      'RABBITMQ_STORAGE_SIZE',
      'REGISTRY_HOST',
      'WEB_REPLICAS',
    ]);
    expect(summary.kustomizations.map((k) => k.name).sort()).toEqual([...INFRA].sort());
    expect(allFiles(join(repo, 'clusters/acme')).sort()).toEqual([
      '.gitops-scaffolder.json',
      'cluster-vars.yaml',
      'flux-system/gotk-sync.yaml',
      'flux-system/kustomization.yaml',
      'kustomization.yaml',
    ]);
    // The shared base and platform are the template's, byte for byte: no per-cluster edits.
    for (const file of allFiles(join(SHIPPED_PHASED_TEMPLATE, 'platform'))) {
      expect(readFileSync(join(repo, 'platform', file), 'utf8')).toBe(
        readFileSync(join(SHIPPED_PHASED_TEMPLATE, 'platform', file), 'utf8'),
      );
    }
    expect(summary.paths_written.every((p) => p.startsWith('clusters/acme/'))).toBe(true);

    const { syncs, applied } = clusterObjects(repo, 'acme');
    const names = syncs.map((k) => k.metadata.name);
    expect(names.sort()).toEqual([...INFRA].sort());
    for (const k of syncs) for (const d of k.spec.dependsOn ?? []) expect(names).toContain(d.name);
    expect(syncs.find((k) => k.metadata.name === 'flux-system').spec.path).toBe('./clusters/acme');
    expect(applied.filter((o) => o.kind === 'Secret' || o.kind === 'SealedSecret')).toEqual([]);
    const externalDns = applied.find((o) => o.kind === 'HelmRelease' && o.metadata.name === 'external-dns').spec.values;
    expect(externalDns.domainFilters).toEqual(['acme.io']);
    expect(externalDns.txtOwnerId).toBe('acme');
    expect(externalDns.env).toContainEqual({ name: 'AWS_DEFAULT_REGION', value: 'us-west-2' });
    const issuer = applied.find((o) => o.kind === 'ClusterIssuer' && o.metadata.name === 'letsencrypt-prod').spec.acme;
    expect(issuer.email).toBe('ops@acme.io');
    expect(issuer.solvers[0].selector.dnsZones).toEqual(['acme.io']);
  });

  it('full pass: secrets sealed for the new cluster, every phase applied, Ingress hosts on the new domain; repeat writes nothing', async () => {
    const repo = tempDir('cv-full');
    await generate(options(repo, { pass: 'infra', sealingCertPem: undefined }));
    const { summary, credentials } = await generate(options(repo));
    expect(summary.kustomizations.map((k) => k.name).sort()).toEqual([...INFRA, ...FULL_ONLY].sort());
    expect(summary.objects_sealed.map((o) => `${o.namespace}/${o.name}`).sort()).toEqual([
      'data/postgresql-credentials',
      'data/rabbitmq-credentials',
      'platform/registry-credentials',
    ]);
    const root = yamlObjects(join(repo, 'clusters/acme/kustomization.yaml'))[0];
    expect(root.resources).toEqual(['flux-system', 'cluster-vars.yaml', 'secrets.yaml', '../base']);

    const { syncs, applied } = clusterObjects(repo, 'acme');
    expect(syncs.find((k) => k.metadata.name === 'cluster-secrets').spec.path).toBe('./clusters/acme/secrets');
    for (const sealed of applied.filter((o) => o.kind === 'SealedSecret')) {
      for (const [key, value] of Object.entries(unsealManifest(cert.privateKeyPem, sealed))) {
        expect(credentials).toContainEqual({
          namespace: sealed.metadata.namespace,
          name: sealed.metadata.name,
          key,
          value,
        });
      }
    }
    expect(applied.filter((o) => o.kind === 'SealedSecret')).toHaveLength(3);
    const hosts = applied.filter((o) => o.kind === 'Ingress').flatMap((o) => o.spec.rules.map((r: any) => r.host));
    expect(hosts.sort()).toEqual(['acme.io', 'api.acme.io', 'www.acme.io']);
    expect(
      applied.find((o) => o.kind === 'Ingress' && o.metadata.name === 'api').metadata.annotations[
        'cert-manager.io/cluster-issuer'
      ],
    ).toBe('letsencrypt-prod');
    const postgres = applied.find((o) => o.kind === 'StatefulSet' && o.metadata.name === 'postgresql');
    expect(postgres.spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBe('50Gi');
    // Flux's escape reaches the cluster as a literal for the container's shell.
    expect(
      applied.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'postgresql-init').data['init.sh'],
    ).toContain('"${POSTGRES_USER}"');

    const text = Object.values(readTree(repo)).join('\n');
    for (const p of withBase64(SHIPPED_PLANTED)) expect(text).not.toContain(p);
    for (const c of credentials.filter((c) => c.key !== 'database')) expect(text).not.toContain(c.value);

    expect((await generate(options(repo))).summary.paths_written).toEqual([]);
    // An infra pass after the full pass keeps what the full pass wrote.
    const infraAgain = await generate(options(repo, { pass: 'infra', sealingCertPem: undefined }));
    expect(infraAgain.summary.paths_written).toEqual([]);
    expect(infraAgain.summary.paths_removed).toEqual([]);
  });

  it('SOPS backend: the secrets Kustomization decrypts, the Secrets open with the age identity', async () => {
    const age = ageIdentity();
    const repo = tempDir('cv-sops');
    const sops = { secretsBackend: 'sops' as const, ageRecipients: [age.recipient], sealingCertPem: undefined };
    await generate(options(repo, { ...sops, pass: 'infra' }));
    const { summary, credentials } = await generate(options(repo, sops));
    expect(summary.repo_files).toEqual(['.sops.yaml']);
    const { syncs } = clusterObjects(repo, 'acme');
    const decrypting = syncs.filter((k) => k.spec.decryption).map((k) => k.metadata.name);
    expect(decrypting).toEqual(['cluster-secrets']);
    expect(syncs.find((k) => k.metadata.name === 'cluster-secrets').spec.decryption).toEqual({
      provider: 'sops',
      secretRef: { name: 'sops-age' },
    });
    for (const file of ['postgresql-credentials.yaml', 'rabbitmq-credentials.yaml', 'registry-credentials.yaml']) {
      const [doc] = yamlObjects(join(repo, 'clusters/acme/secrets', file));
      const { plain, macOk } = sopsOpen(doc, age.keyFile);
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
  });

  it('warns when a first-pass component reads a Secret that only the full pass brings (a missing dependsOn)', async () => {
    const template = tempDir('cv-early-secret');
    cpSync(SHIPPED_PHASED_TEMPLATE, template, { recursive: true });
    const webSync = join(template, 'platform/web/ks.yaml');
    writeFileSync(webSync, readFileSync(webSync, 'utf8').replace('    - name: api', '    - name: ingress-nginx'));
    const { summary } = await generate(
      options(tempDir('cv-early-repo'), { templateDir: template, pass: 'infra', sealingCertPem: undefined }),
    );
    expect(summary.kustomizations.map((k) => k.name)).toContain('web');
    expect(summary.warnings).toContain(
      'Flux Kustomization web goes out in the first pass but Deployment web reads Secret platform/registry-credentials, which cluster-secrets brings in the full pass: give web dependsOn cluster-secrets',
    );
  });

  it('refuses a platform that uses a variable the new cluster does not define, and accepts it once given', async () => {
    const template = tempDir('cv-tpl');
    cpSync(SHIPPED_PHASED_TEMPLATE, template, { recursive: true });
    const deployment = join(template, 'platform/api/app/deployment.yaml');
    writeFileSync(
      deployment,
      readFileSync(deployment, 'utf8').replace(
        'image: ${REGISTRY_HOST}/platform/api:1.4.2',
        'image: ${REGISTRY_HOST}/platform/api:${API_VERSION}',
      ),
    );
    const repo = tempDir('cv-missing');
    const run = (extra: Partial<GenerateOptions>) =>
      generate(options(repo, { templateDir: template, pass: 'infra', sealingCertPem: undefined, ...extra }));
    const failure = run({}).catch((e) => e);
    await expect(failure).resolves.toBeInstanceOf(GeneratorInputError);
    expect((await failure).message).toMatch(
      /\$\{API_VERSION\} in platform\/api\/app\/deployment\.yaml \(Deployment api\)/,
    );
    expect(allFiles(repo)).toEqual([]);
    const ok = await run({ clusterVars: { ...options(repo).clusterVars, API_VERSION: '1.5.0' } });
    expect(ok.summary.cluster_vars!.API_VERSION).toBe('1.5.0');
    const { applied } = clusterObjects(repo, 'acme');
    expect(applied.filter((o) => o.kind === 'Deployment')).toEqual([]); // api is a full-pass component
  });

  it('refuses a shared host that does not follow cluster-vars, a sealed reference, unknown --var names and a Secret in the first pass', async () => {
    const template = tempDir('cv-bad');
    cpSync(SHIPPED_PHASED_TEMPLATE, template, { recursive: true });
    const ingress = join(template, 'platform/web/app/ingress.yaml');
    writeFileSync(
      ingress,
      readFileSync(ingress, 'utf8').replace('host: www.${CLUSTER_DOMAIN}', 'host: static.dev.example.net'),
    );
    const repo = tempDir('cv-bad-repo');
    await expect(generate(options(repo, { templateDir: template }))).rejects.toThrow(
      /Ingress web spec\.rules\[1\]\.host: a host that is not under acme\.io/,
    );
    await expect(generate(options(repo, { referenceEnv: 'prod' }))).rejects.toThrow(
      /SealedSecret postgresql-credentials, sealed for the reference cluster/,
    );
    await expect(generate(options(repo, { clusterVars: { NOT_USED: 'x' } }))).rejects.toThrow(
      /--var NOT_USED: the reference's cluster-vars has no NOT_USED/,
    );
    await expect(generate(options(repo, { clusterVars: { 'BAD-NAME': 'x' } }))).rejects.toThrow(
      /not a Flux variable name/,
    );

    const early = tempDir('cv-early');
    cpSync(SHIPPED_PHASED_TEMPLATE, early, { recursive: true });
    const rootKustomization = join(early, 'clusters/dev/kustomization.yaml');
    writeFileSync(
      rootKustomization,
      readFileSync(rootKustomization, 'utf8').replace(
        '  - ../base',
        '  - ../base\n  - secrets/registry-credentials.yaml',
      ),
    );
    await expect(generate(options(repo, { templateDir: early }))).rejects.toThrow(
      /registry-credentials.*applied by the cluster's own sync in the first pass/,
    );

    // Without its kustomization.yaml Flux would apply every file of the folder: the generator asks for one.
    rmSync(rootKustomization);
    await expect(generate(options(repo, { templateDir: early }))).rejects.toThrow(
      /substitutes ConfigMap cluster-vars, which clusters\/dev defines, but clusters\/dev has no kustomization\.yaml/,
    );
    expect(allFiles(repo)).toEqual([]);
  });

  it('warns about inherited values that name the reference cluster, and --var on an overlay reference is an error', async () => {
    const repo = tempDir('cv-warn');
    const { summary } = await generate(options(repo, { pass: 'infra', sealingCertPem: undefined, clusterVars: {} }));
    expect(summary.warnings.join('\n')).toMatch(/EXTERNAL_DNS_ROLE_ARN keeps the reference's value .*external-dns-dev/);
    expect(summary.warnings.join('\n')).not.toMatch(/goes out in the first pass/);
    await expect(
      generate(options(tempDir('cv-overlay'), { templateDir: undefined, referenceEnv: undefined, pass: 'infra' })),
    ).rejects.toThrow(/has no cluster-vars ConfigMap/);
  });
});

describe('generator, cluster-vars model on a differently shaped reference (cluster-settings, phases in the environment)', () => {
  const cert = makeRsaCert();
  const template = tempDir('settings-ref');
  writeSettingsReference(template);
  const options = (repoDir: string, extra: Partial<GenerateOptions> = {}): GenerateOptions => ({
    repoDir,
    templateDir: template,
    referenceEnv: 'staging',
    clusterName: 'shop-eu',
    domain: 'shop-eu.example.net',
    region: 'eu-north-1',
    acmeEmail: 'infra@example.net',
    pass: 'full',
    sealingCertPem: cert.certPem,
    ...extra,
  });

  it('derives cluster-settings, leaves the secret phase for the full pass, and honours defaults, inline values, optional sources and disabled substitution', async () => {
    const repo = tempDir('settings-repo');
    const infra = await generate(options(repo, { pass: 'infra', sealingCertPem: undefined }));
    expect(infra.summary.environment_model).toBe('cluster-vars');
    expect(infra.summary.cluster_vars).toEqual({
      SECRET_DOMAIN: 'shop-eu.example.net',
      AWS_REGION: 'eu-north-1',
      LE_EMAIL: 'infra@example.net',
      CLUSTER: 'shop-eu',
      DB_SIZE: '20Gi',
    });
    expect(infra.summary.cluster_vars_inherited).toEqual(['DB_SIZE']);
    expect(yamlObjects(join(repo, 'clusters/shop-eu/kustomization.yaml'))[0].resources).toEqual([
      'flux-system',
      'vars',
      'infrastructure.yaml',
    ]);
    expect(allFiles(join(repo, 'clusters/shop-eu')).filter((f) => /apps|credentials/.test(f))).toEqual([]);
    let cluster = clusterObjects(repo, 'shop-eu', 'cluster-settings');
    expect(cluster.syncs.map((k) => k.metadata.name).sort()).toEqual(['configs', 'controllers', 'flux-system']);
    const dns = cluster.applied.find((o) => o.kind === 'Deployment' && o.metadata.name === 'external-dns').spec.template
      .spec.containers[0];
    expect(dns.args).toEqual(['--provider=aws', '--domain-filter=shop-eu.example.net', '--txt-owner-id=shop-eu']);
    expect(cluster.applied.find((o) => o.kind === 'ClusterIssuer').metadata.name).toBe('corp-acme');

    const { summary, credentials } = await generate(options(repo));
    expect(yamlObjects(join(repo, 'clusters/shop-eu/kustomization.yaml'))[0].resources).toEqual([
      'flux-system',
      'vars',
      'infrastructure.yaml',
      'apps.yaml',
    ]);
    expect(summary.objects_sealed).toMatchObject([
      { namespace: 'shop', name: 'shop-db', file: 'clusters/shop-eu/credentials/db.yaml' },
    ]);
    cluster = clusterObjects(repo, 'shop-eu', 'cluster-settings');
    expect(cluster.syncs.find((k) => k.metadata.name === 'credentials').spec.path).toBe(
      './clusters/shop-eu/credentials',
    );
    expect(cluster.syncs.find((k) => k.metadata.name === 'flux-system').spec.sourceRef.name).toBe('fleet');
    const [sealed] = cluster.applied.filter((o) => o.kind === 'SealedSecret');
    expect(unsealManifest(cert.privateKeyPem, sealed).password).toBe(
      credentials.find((c) => c.key === 'password')!.value,
    );
    expect(cluster.applied.find((o) => o.kind === 'Ingress').spec.rules.map((r: any) => r.host)).toEqual([
      'shop.shop-eu.example.net',
      'api.shop.shop-eu.example.net',
    ]);
    expect(cluster.applied.find((o) => o.kind === 'PersistentVolumeClaim').spec.resources.requests.storage).toBe(
      '20Gi',
    );
    const text = Object.values(readTree(repo)).join('\n');
    for (const planted of Object.values(SETTINGS_PLANTED)) expect(text).not.toContain(planted);
    for (const file of allFiles(join(template, 'apps')))
      expect(readFileSync(join(repo, 'apps', file), 'utf8')).toBe(readFileSync(join(template, 'apps', file), 'utf8'));
  });

  it('opens a folder of the environment that holds both phases for the infrastructure pass', async () => {
    const phased = tempDir('settings-phases');
    cpSync(template, phased, { recursive: true });
    const env = join(phased, 'clusters/staging');
    for (const file of ['infrastructure.yaml', 'apps.yaml']) {
      writeTree(join(env, 'phases'), { [file]: readFileSync(join(env, file), 'utf8') });
      rmSync(join(env, file));
    }
    writeTree(env, {
      'phases/kustomization.yaml': 'resources:\n  - infrastructure.yaml\n  - apps.yaml\n',
      'kustomization.yaml': 'resources:\n  - flux-system\n  - vars\n  - phases\n',
    });
    const repo = tempDir('settings-phases-repo');
    const infra = await generate(options(repo, { templateDir: phased, pass: 'infra', sealingCertPem: undefined }));
    expect(yamlObjects(join(repo, 'clusters/shop-eu/kustomization.yaml'))[0].resources).toEqual([
      'flux-system',
      'vars',
      'phases/infrastructure.yaml',
    ]);
    expect(infra.summary.kustomizations.map((k) => k.name).sort()).toEqual(['configs', 'controllers', 'flux-system']);
    expect(allFiles(join(repo, 'clusters/shop-eu/phases')).sort()).toEqual([
      'infrastructure.yaml',
      'kustomization.yaml',
    ]);
    await generate(options(repo, { templateDir: phased }));
    expect(yamlObjects(join(repo, 'clusters/shop-eu/kustomization.yaml'))[0].resources).toEqual([
      'flux-system',
      'vars',
      'phases',
    ]);
    expect(
      clusterObjects(repo, 'shop-eu', 'cluster-settings')
        .syncs.map((k) => k.metadata.name)
        .sort(),
    ).toEqual(['apps', 'configs', 'controllers', 'credentials', 'flux-system']);
  });

  it('refuses a Kustomization over a folder that holds the reference environment (it would carry its credentials along)', async () => {
    const wide = tempDir('settings-wide');
    cpSync(template, wide, { recursive: true });
    writeFileSync(join(wide, 'kustomization.yaml'), 'resources:\n  - infra/controllers\n');
    const apps = join(wide, 'clusters/staging/apps.yaml');
    writeFileSync(
      apps,
      readFileSync(apps, 'utf8') +
        '---\n' +
        JSON.stringify({
          apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
          kind: 'Kustomization',
          metadata: { name: 'everything', namespace: 'flux-system' },
          spec: { path: './', sourceRef: { kind: 'GitRepository', name: 'fleet' } },
        }) +
        '\n',
    );
    const repo = tempDir('settings-wide-repo');
    await expect(
      generate(options(repo, { templateDir: wide, pass: 'infra', sealingCertPem: undefined })),
    ).rejects.toThrow(/\. is applied as a shared folder but holds the environment clusters\/staging/);
    expect(allFiles(repo)).toEqual([]);
  });
});
