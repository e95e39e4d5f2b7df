import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { generate, GenerateOptions, GeneratorInputError } from '#libs/generator';
import { describeSummary } from '#libs/generator/summary-text';
import { sopsEncrypt } from '#libs/sealing/sops';
import { makeRsaCert } from '../support/certs';
import { kustomize, readTree, tempDir, yamlObjects } from '../support/files';
import { ageIdentity, sopsOpen } from '../support/sops-open';
import { homeOpsOptions } from '../support/home-ops-options';

/**
 * A repository in the rendered shape of onedr0p/cluster-template (MIT, see the fixture's LICENSE and
 * README), multi-cluster as in onedr0p/home-ops: kubernetes/main/ holds flux/ (the GitRepository and
 * the Kustomization `cluster` over ./kubernetes/main/flux, `cluster-apps` patching every per-app
 * Kustomization with substituteFrom cluster-settings and the SOPS-encrypted cluster-secrets) and
 * apps/<namespace>/<app>/ks.yaml with app/ folders.
 */
const FIXTURE = join(__dirname, '../fixtures/public/onedr0p-cluster-template');
const REFERENCE_VALUES = [
  'main.example.net',
  'admin@example.net',
  'kubernetes/main',
  'reference-cluster-webhook-token',
];
const TOKENS = {
  'cert-manager/cert-manager-secret/api-token': 'AcmeCloudflareToken-cert-manager-7e7e',
  'network/external-dns-secret/api-token': 'AcmeCloudflareToken-external-dns-8f8f',
  // The token GitHub signs its webhook calls with (the Flux Receiver checks it): given to GitHub, so supplied.
  'flux-system/cluster-secrets/SECRET_WEBHOOK_TOKEN': 'AcmeGithubWebhookToken-9a9a',
};
const WEBHOOK_TOKEN = TOKENS['flux-system/cluster-secrets/SECRET_WEBHOOK_TOKEN'];

describe('reference environment outside clusters/ (home-ops, rendered cluster-template layout)', () => {
  const age = ageIdentity();
  const options = (repoDir: string, templateDir: string, extra: Partial<GenerateOptions> = {}): GenerateOptions =>
    homeOpsOptions(age.recipient, repoDir, templateDir, { suppliedCredentials: TOKENS, ...extra });
  const treeBelow = (root: string, dir: string) =>
    Object.fromEntries(Object.entries(readTree(root)).filter(([path]) => path.startsWith(dir + '/')));
  const opened = (repo: string, file: string) => {
    const { plain, macOk } = sopsOpen(yamlObjects(join(repo, file))[0], age.keyFile);
    expect(macOk).toBe(true);
    return plain.stringData as Record<string, string>;
  };

  /** Both passes into `repo`; the reference's own files are compared before and after. */
  async function bothPasses(repo: string, templateDir: string, extra: Partial<GenerateOptions> = {}) {
    const before = treeBelow(templateDir, 'kubernetes/main');
    const infra = await generate(options(repo, templateDir, extra));
    const full = await generate(options(repo, templateDir, { ...extra, pass: 'full' }));
    if (templateDir !== repo || extra.referenceEnv === undefined)
      expect(treeBelow(templateDir, 'kubernetes/main')).toEqual(before);
    return { infra: infra.summary, full: full.summary };
  }

  it('writes the new cluster beside the reference: paths, settings, secrets and the sync moved, validated as Flux builds it', async () => {
    const repo = tempDir('home-ops');
    cpSync(FIXTURE, repo, { recursive: true });
    const reference = treeBelow(repo, 'kubernetes/main');
    const infra = await generate(options(repo, repo));
    expect(infra.summary.gitops_path).toBe('kubernetes/acme');
    // The first pass: everything but what holds the apps' Secrets (the cluster's own SOPS cluster-secrets go first).
    expect(infra.summary.kustomizations.map((k) => k.name).sort()).toEqual([
      'cert-manager',
      'cluster',
      'cluster-apps',
      'echo-server',
    ]);
    expect(existsSync(join(repo, 'kubernetes/acme/apps/network/external-dns'))).toBe(false);
    expect(
      yamlObjects(join(repo, 'kubernetes/acme/apps/cert-manager/cert-manager/ks.yaml')).map((k) => k.metadata.name),
    ).toEqual(['cert-manager']);
    expect(yamlObjects(join(repo, 'kubernetes/acme/apps/network/kustomization.yaml'))[0].resources).toEqual([
      './namespace.yaml',
      './echo-server/ks.yaml',
    ]);

    const full = (await generate(options(repo, repo, { pass: 'full' }))).summary;
    // The reference domain comes from cluster-settings' CLUSTER_DOMAIN; every value naming the reference moves.
    const newSettings = {
      CLUSTER_NAME: 'acme',
      CLUSTER_DOMAIN: 'acme.example.com',
      ACME_EMAIL: 'ops@acme.example.com',
    };
    expect(full).toMatchObject({ environment_model: 'cluster-vars', reference_domain: 'main.example.net' });
    expect(full.cluster_vars).toEqual({ ...newSettings, TIMEZONE: 'Etc/UTC' });
    expect(full.kustomizations.map((k) => k.path).sort()).toEqual([
      './kubernetes/acme/apps',
      './kubernetes/acme/apps/cert-manager/cert-manager/app',
      './kubernetes/acme/apps/cert-manager/cert-manager/issuers',
      './kubernetes/acme/apps/network/echo-server/app',
      './kubernetes/acme/apps/network/external-dns/app',
      './kubernetes/acme/flux',
    ]);
    // Every Kustomization of the new cluster was built as Flux builds it (generated kustomizations, patches, substitution).
    expect(full.validated).toEqual(
      expect.arrayContaining([
        'kubernetes/acme/flux',
        'kubernetes/acme/apps',
        'kubernetes/acme/apps/network/echo-server/app',
        'kubernetes/acme/apps/network/external-dns/app',
        'kubernetes/acme/apps/cert-manager/cert-manager/issuers',
      ]),
    );
    // The reference stays byte for byte; nothing of it is left in the new cluster's files.
    expect(treeBelow(repo, 'kubernetes/main')).toEqual(reference);
    // (the ownership marker names the reference environment it was made from, as it should)
    const written = treeBelow(repo, 'kubernetes/acme');
    delete written['kubernetes/acme/.gitops-scaffolder.json'];
    for (const [path, text] of Object.entries(written))
      for (const value of REFERENCE_VALUES) expect(`${path}: ${text.includes(value)}`).toBe(`${path}: false`);

    const [gitRepository, cluster] = yamlObjects(join(repo, 'kubernetes/acme/flux/config/cluster.yaml'));
    expect(gitRepository.spec.ignore).toContain('!/kubernetes/acme\n');
    expect(cluster.spec.path).toBe('./kubernetes/acme/flux');
    expect(cluster.spec.decryption).toEqual({ provider: 'sops', secretRef: { name: 'sops-age' } });

    // The Secrets open with the new cluster's age key: supplied tokens as given, generated values fresh.
    const clusterSecrets = opened(repo, 'kubernetes/acme/flux/vars/cluster-secrets.sops.yaml');
    expect(clusterSecrets.SECRET_WEBHOOK_TOKEN).toBe(WEBHOOK_TOKEN);
    expect(opened(repo, 'kubernetes/acme/apps/network/external-dns/app/secret.sops.yaml')['api-token']).toBe(
      TOKENS['network/external-dns-secret/api-token'],
    );
    expect(opened(repo, 'kubernetes/acme/apps/cert-manager/cert-manager/issuers/secret.sops.yaml')['api-token']).toBe(
      TOKENS['cert-manager/cert-manager-secret/api-token'],
    );
    // Every file it encrypted is covered by the first creation rule of .sops.yaml (the reference's rules kept after it).
    const rules = parse(readTree(repo)['.sops.yaml']).creation_rules;
    expect(rules).toHaveLength(3);
    for (const sealed of full.objects_sealed) expect(sealed.file).toMatch(new RegExp(rules[0].path_regex));
    expect(rules[0].age).toBe(age.recipient);

    // The new cluster's folders build with kubectl kustomize as they are.
    expect(
      kustomize(join(repo, 'kubernetes/acme/flux/vars')).find((o) => o.kind === 'ConfigMap').data.CLUSTER_DOMAIN,
    ).toBe('acme.example.com');
    expect(kustomize(join(repo, 'kubernetes/acme/apps/network')).map((o) => o.metadata.name)).toEqual([
      'network',
      'echo-server',
      'external-dns',
    ]);

    // A second run writes nothing.
    const again = await generate(options(repo, repo, { pass: 'full' }));
    expect(again.summary.paths_written).toEqual([]);
  });

  it('writes a new repository per customer at the reference’s own paths, with nothing of the reference cluster', async () => {
    const repo = tempDir('home-ops-new-repo');
    const { full } = await bothPasses(repo, FIXTURE);
    expect(full.gitops_path).toBe('kubernetes/main');
    // The shared component the environment's apps use is copied along, byte for byte.
    expect(readdirSync(join(repo, 'kubernetes')).sort()).toEqual(['components', 'main']);
    expect(treeBelow(repo, 'kubernetes/components')).toEqual(treeBelow(FIXTURE, 'kubernetes/components'));
    const settings = yamlObjects(join(repo, 'kubernetes/main/flux/vars/cluster-settings.yaml'))[0];
    expect(settings.data).toMatchObject({ CLUSTER_NAME: 'acme', CLUSTER_DOMAIN: 'acme.example.com' });
    const [gitRepository, cluster] = yamlObjects(join(repo, 'kubernetes/main/flux/config/cluster.yaml'));
    expect(cluster.spec.path).toBe('./kubernetes/main/flux');
    expect(gitRepository.spec.ignore).toContain('!/kubernetes/main\n');
    for (const [path, text] of Object.entries(treeBelow(repo, 'kubernetes/main')))
      for (const value of ['main.example.net', 'admin@example.net', 'reference-cluster-webhook-token'])
        expect(`${path}: ${text.includes(value)}`).toBe(`${path}: false`);
    expect(opened(repo, 'kubernetes/main/flux/vars/cluster-secrets.sops.yaml').SECRET_WEBHOOK_TOKEN).toBe(
      WEBHOOK_TOKEN,
    );
    expect(full.validated).toEqual(expect.arrayContaining(['kubernetes/main/flux', 'kubernetes/main/apps']));
    // Re-run: the folder is this cluster's (its marker), so it is written again in place and nothing changes.
    expect((await generate(options(repo, FIXTURE, { pass: 'full' }))).summary.paths_written).toEqual([]);
    // Another customer into the same repository goes beside it.
    const other = await generate(options(repo, FIXTURE, { clusterName: 'globex', domain: 'globex.example.com' }));
    expect(other.summary.gitops_path).toBe('kubernetes/globex');
  });

  it('reads a single-cluster kubernetes/ repository: only into another repository, at kubernetes/', async () => {
    const single = tempDir('home-ops-single');
    cpSync(FIXTURE, single, { recursive: true });
    for (const entry of readdirSync(join(single, 'kubernetes/main')))
      renameSync(join(single, 'kubernetes/main', entry), join(single, 'kubernetes', entry));
    rmSync(join(single, 'kubernetes/main'), { recursive: true });
    rewriteAll(single, 'kubernetes/main', 'kubernetes');
    rewriteAll(single, '../../../../../components/', '../../../../components/');
    const same = generate(options(single, single, { referenceEnv: 'kubernetes' }));
    await expect(same).rejects.toThrow(/whole repository's cluster .*give --repo another repository/);
    const repo = tempDir('home-ops-single-out');
    mkdirSync(repo, { recursive: true });
    const { full } = await bothPasses(repo, single, { referenceEnv: 'kubernetes' });
    expect(full.gitops_path).toBe('kubernetes');
    expect(yamlObjects(join(repo, 'kubernetes/flux/vars/cluster-settings.yaml'))[0].data.CLUSTER_NAME).toBe('acme');
    expect(full.validated).toEqual(expect.arrayContaining(['kubernetes/flux', 'kubernetes/apps']));
    expect(full.shared_paths_copied).toEqual([]);
  });

  it('refuses the sealed-secrets backend for the cluster-secrets its own sync substitutes everywhere, naming the file', async () => {
    const repo = tempDir('home-ops-sealed');
    const run = generate(
      options(repo, FIXTURE, {
        secretsBackend: 'sealed-secrets',
        ageRecipients: undefined,
        pass: 'full',
        sealingCertPem: makeRsaCert().certPem,
      }),
    );
    await expect(run).rejects.toThrow(GeneratorInputError);
    await expect(run).rejects.toThrow(
      /kubernetes\/main\/flux\/vars\/cluster-secrets\.sops\.yaml \(Secret cluster-secrets.*--secrets-backend sops/,
    );
  });

  it("moves the domain and ACME e-mail held in the encrypted cluster-secrets (the template's own shape) by their key names", async () => {
    const reference = tempDir('home-ops-secret-domain');
    cpSync(FIXTURE, reference, { recursive: true });
    const main = (rel: string) => join(reference, 'kubernetes/main', rel);
    const referenceCluster = ageIdentity();
    writeFileSync(
      main('flux/vars/cluster-secrets.sops.yaml'),
      stringify(
        await sopsEncrypt(
          {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name: 'cluster-secrets', namespace: 'flux-system' },
            stringData: {
              SECRET_DOMAIN: 'main.example.net',
              SECRET_ACME_EMAIL: 'admin@example.net',
              SECRET_WEBHOOK_TOKEN: 'reference-cluster-webhook-token-4f1b9c',
            },
          },
          { recipients: [referenceCluster.recipient] },
        ),
      ),
    );
    writeFileSync(
      main('flux/vars/cluster-settings.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-settings\n  namespace: flux-system\ndata:\n  CLUSTER_NAME: main\n  TIMEZONE: Etc/UTC\n',
    );
    rewriteAll(reference, '${CLUSTER_DOMAIN}', '${SECRET_DOMAIN}');
    rewriteAll(reference, '${ACME_EMAIL}', '${SECRET_ACME_EMAIL}');
    const repo = tempDir('home-ops-secret-domain-out');
    // The reference domain is encrypted: the generator asks for it rather than guess.
    await expect(generate(options(repo, reference))).rejects.toThrow(
      /its domain is held where the generator cannot read it: SECRET_DOMAIN \(encrypted in kubernetes\/main\/flux\/vars\/cluster-secrets\.sops\.yaml\)\. Give --reference-domain$/,
    );
    const { full } = await bothPasses(repo, reference, { referenceDomain: 'main.example.net' });
    const secrets = opened(repo, 'kubernetes/main/flux/vars/cluster-secrets.sops.yaml');
    expect(secrets).toMatchObject({ SECRET_DOMAIN: 'acme.example.com', SECRET_ACME_EMAIL: 'ops@acme.example.com' });
    expect(secrets.SECRET_WEBHOOK_TOKEN).toBe(WEBHOOK_TOKEN);
    expect(full.credential_plan.filter((e) => e.name === 'cluster-secrets').map((e) => [e.key, e.class])).toEqual([
      ['SECRET_ACME_EMAIL', 'derived'],
      ['SECRET_DOMAIN', 'derived'],
      ['SECRET_WEBHOOK_TOKEN', 'supplied'],
    ]);
    // Validation substituted the new values: external-dns is given the new domain.
    expect(full.external_dns[0].domain_filters).toEqual(['acme.example.com']);
  });

  // A second domain as public home-ops cluster-secrets hold it (SECRET_DOMAIN and SECRET_DOMAIN_2 side by side,
  // encrypted): the new cluster's second domain is the user's to give, never a random string used as a host.
  it('asks for a second domain held encrypted in cluster-secrets (SECRET_DOMAIN_2) with the other missing values, at once', async () => {
    const reference = tempDir('home-ops-domain-2');
    cpSync(FIXTURE, reference, { recursive: true });
    const main = (rel: string) => join(reference, 'kubernetes/main', rel);
    writeFileSync(
      main('flux/vars/cluster-secrets.sops.yaml'),
      stringify(
        await sopsEncrypt(
          {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name: 'cluster-secrets', namespace: 'flux-system' },
            stringData: {
              SECRET_DOMAIN: 'main.example.net',
              SECRET_DOMAIN_2: 'second.example.org',
              SECRET_WEBHOOK_TOKEN: 'reference-cluster-webhook-token-4f1b9c',
            },
          },
          { recipients: [ageIdentity().recipient] },
        ),
      ),
    );
    const release = main('apps/network/echo-server/app/helmrelease.yaml');
    writeFileSync(
      release,
      readFileSync(release, 'utf8').replace(
        '          - host: echo-server.${CLUSTER_DOMAIN}',
        '          - host: echo-server.${CLUSTER_DOMAIN}\n            paths: [{ path: /, service: { identifier: app, port: http } }]\n          - host: echo.${SECRET_DOMAIN_2}',
      ),
    );
    const repo = tempDir('home-ops-domain-2-out');
    const given = { referenceDomain: 'main.example.net' };
    const without = { ...TOKENS } as Record<string, string>;
    delete without['flux-system/cluster-secrets/SECRET_WEBHOOK_TOKEN'];
    const refused = generate(options(repo, reference, { ...given, suppliedCredentials: without }));
    await expect(refused).rejects.toThrow(GeneratorInputError);
    await expect(refused).rejects.toThrow(
      /2 value\(s\) the generator must not invent are missing .*flux-system\/cluster-secrets\/SECRET_DOMAIN_2, flux-system\/cluster-secrets\/SECRET_WEBHOOK_TOKEN/,
    );
    expect(readTree(repo)).toEqual({});
    const second = 'acme-second.example.org';
    const { full } = await bothPasses(repo, reference, {
      ...given,
      suppliedCredentials: { ...TOKENS, 'flux-system/cluster-secrets/SECRET_DOMAIN_2': second },
    });
    expect(opened(repo, 'kubernetes/main/flux/vars/cluster-secrets.sops.yaml')).toMatchObject({
      SECRET_DOMAIN: 'acme.example.com',
      SECRET_DOMAIN_2: second,
    });
    expect(full.credential_plan.filter((e) => e.name === 'cluster-secrets').map((e) => [e.key, e.class])).toEqual([
      ['SECRET_DOMAIN', 'derived'],
      ['SECRET_DOMAIN_2', 'supplied'],
      ['SECRET_WEBHOOK_TOKEN', 'supplied'],
    ]);
  });

  it('takes --reference-domain over what cluster settings say', async () => {
    const repo = tempDir('home-ops-refdomain');
    const given = generate(options(repo, FIXTURE, { referenceDomain: 'example.net' }));
    // Hosts under main.example.net now keep "main": echo-server.main.acme.example.com is not what settings would give,
    // but the value moves by the given domain, as asked.
    const summary = (await given).summary;
    expect(summary.reference_domain).toBe('example.net');
    expect(summary.cluster_vars?.CLUSTER_DOMAIN).toBe('main.acme.example.com');
  });
  it("carries a Kustomization over another source without reading it as this repository's (rcdailey/home-ops: an OCI artifact, no spec.path)", async () => {
    // Before: refused with "Kustomization garage-operator has no spec.path" (optional: the source's root).
    const template = tempDir('home-ops-other-source');
    cpSync(FIXTURE, template, { recursive: true });
    const real = join(
      __dirname,
      '../fixtures/public/rcdailey-home-ops/kubernetes/apps/storage/garage-operator/ks.yaml',
    );
    const [ks] = yamlObjects(real);
    delete ks.spec.dependsOn; // its dependency (garage) is another app of that repository, not vendored
    mkdirSync(join(template, 'kubernetes/main/apps/storage/garage-operator'), { recursive: true });
    writeFileSync(join(template, 'kubernetes/main/apps/storage/garage-operator/ks.yaml'), stringify(ks));
    const { infra, full } = await bothPasses(template, template);
    const repo = template;
    const carried = yamlObjects(join(repo, 'kubernetes/acme/apps/storage/garage-operator/ks.yaml'));
    expect(carried).toEqual([ks]);
    expect(infra.kustomizations.map((k) => k.name)).toContain('garage-operator');
    // Not built against this repository (its root has no manifests of the artifact), and said so.
    expect(full.validated?.some((path) => path.includes('garage'))).toBe(false);
    expect(full.warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /Kustomization garage-operator: source OCIRepository garage-s3-operator is not this repository; what it applies is not inspected/,
        ),
      ]),
    );
  });
  it('names a domain the settings do not hold (a Secret made outside the repository), and asks for it', async () => {
    const reference = tempDir('home-ops-external-domain');
    cpSync(FIXTURE, reference, { recursive: true });
    const settings = join(reference, 'kubernetes/main/flux/vars/cluster-settings.yaml');
    writeFileSync(settings, readFileSync(settings, 'utf8').replace(/^ {2}CLUSTER_DOMAIN: .*\n/m, ''));
    // Before: "no domain to learn", without saying where the domain is.
    await expect(generate(options(tempDir('home-ops-external-domain-out'), reference))).rejects.toThrow(
      /its domain is held where the generator cannot read it: CLUSTER_DOMAIN \(used in kubernetes\/main\/apps\/.*, defined outside cluster-settings\)\. Give --reference-domain$/,
    );
  });

  it('scaffolds a cluster that serves no host and names no domain, without inventing --reference-domain', async () => {
    // The template without what serves hosts (network apps, DNS-01 zones): nothing moves by domain.
    const reference = tempDir('home-ops-no-domain');
    cpSync(FIXTURE, reference, { recursive: true });
    rmSync(join(reference, 'kubernetes/main/apps/network'), { recursive: true });
    const issuers = join(reference, 'kubernetes/main/apps/cert-manager/cert-manager/issuers/issuers.yaml');
    writeFileSync(
      issuers,
      readFileSync(issuers, 'utf8').replace(/\n {8}selector:\n {10}dnsZones:\n {12}- "\$\{CLUSTER_DOMAIN\}"/g, ''),
    );
    const settings = join(reference, 'kubernetes/main/flux/vars/cluster-settings.yaml');
    writeFileSync(settings, readFileSync(settings, 'utf8').replace(/^ {2}CLUSTER_DOMAIN: .*\n/m, ''));
    const repo = tempDir('home-ops-no-domain-out');
    const { infra, full } = await bothPasses(repo, reference);
    expect(infra.reference_domain).toBe('');
    expect(full.reference_domain).toBe('');
    expect(full.cluster_vars).toMatchObject({ CLUSTER_NAME: 'acme', ACME_EMAIL: 'ops@acme.example.com' });
    expect(describeSummary(full).split('\n')[0]).toBe(
      'full pass for acme (acme.example.com, eu-west-1) from kubernetes/main',
    );
  });
});

/** Rewrites a string in every YAML file of a tree (the fixture moved to another shape). */
function rewriteAll(root: string, from: string, to: string) {
  for (const [path, text] of Object.entries(readTree(root)))
    if (/\.ya?ml$/.test(path) && text.includes(from)) writeFileSync(join(root, path), text.replaceAll(from, to));
}
