import { spawnSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate, GenerateOptions, GeneratorInputError, GeneratorValidationError } from '#libs/generator';
import { makeRsaCert } from '../support/certs';
import { childEnv, kustomize, readTree, tempDir, yamlObjects } from '../support/files';
import {
  EXAMPLE_ACME_EMAIL,
  EXAMPLE_ACME_SERVER,
  EXAMPLE_HOSTS,
  ExampleOptions,
  UPSTREAM_BOOTSTRAP_PLACEHOLDER,
  UPSTREAM_FLUX_SYSTEM_KUSTOMIZATION,
  writeFluxExampleReference,
  exampleFirstPass,
} from '../support/flux-example-repo';
import { clusterView, outsideNewCluster } from '../support/flux-build';
import { unsealManifest } from '../support/unseal';
import { CLI_REGISTRY_ENV } from '../support/generator-cli';

const NEW_HOSTS = ['*.acme.io', 'api.acme.io', 'podinfo.acme.io', 'status.acme.io'];
const HOST_MAP = { [EXAMPLE_HOSTS.podinfo]: 'podinfo.acme.io' };
const BIN = join(__dirname, '../../bin/generate-gitops-env');
/** Flux's URL for a new repository without an origin remote (the generator refuses to keep the reference's). */
const SOURCE_URL = ['--source-url', 'https://git.example.org/acme/fleet.git'];

/**
 * Hosts of the kinds the issue names, read here independently of the production code's table:
 * Ingress rules and TLS, Gateway API routes and listeners, cert-manager Certificates and the
 * podinfo chart's ingress values.
 */
function hostsOf(o: any): string[] {
  const values = o.spec?.values ?? {};
  const all = [
    ...(o.kind === 'Ingress'
      ? [...(o.spec?.rules ?? []).map((r: any) => r.host), ...(o.spec?.tls ?? []).flatMap((t: any) => t.hosts ?? [])]
      : []),
    ...(o.kind === 'HTTPRoute' ? (o.spec?.hostnames ?? []) : []),
    ...(o.kind === 'Gateway' ? (o.spec?.listeners ?? []).map((l: any) => l.hostname) : []),
    ...(o.kind === 'Certificate' ? (o.spec?.dnsNames ?? []) : []),
    ...(o.kind === 'HelmRelease'
      ? [
          ...(values.ingress?.hosts ?? []).map((h: any) => h.host),
          ...(values.ingress?.tls ?? []).flatMap((t: any) => t.hosts ?? []),
        ]
      : []),
  ];
  return all.filter((h) => typeof h === 'string');
}

/** A reference of the given shape, a fleet repository holding a copy of it, and the options of a first pass into it. */
/** The options of a first pass for acme from the reference's staging environment into `repoDir`. */
const firstPass = (repoDir: string, templateDir: string): GenerateOptions => exampleFirstPass(repoDir, templateDir);

function exampleFleet(shape: ExampleOptions) {
  const reference = tempDir('fx-reference');
  writeFluxExampleReference(reference, shape);
  const repo = tempDir('fx-fleet');
  cpSync(reference, repo, { recursive: true });
  return { reference, repo, options: firstPass(repo, reference) };
}

describe.each([
  ['GitRepository sources (Flux up to 2.6)', false],
  ['ExternalArtifact sources from an ArtifactGenerator (Flux 2.7)', true],
])("generator, the layout of Flux's example repository: %s", (_title, artifacts) => {
  // Each test scaffolds into a fleet of its own, copied from a reference of its own.
  let current: ReturnType<typeof exampleFleet>;
  const fleet = () => (current = exampleFleet({ artifacts })).repo;
  const options = (repoDir: string, extra: Partial<GenerateOptions> = {}): GenerateOptions => ({
    ...current.options,
    repoDir,
    ...extra,
  });

  it('scaffolds clusters/acme and apps/acme through both passes; shared folders and the reference environments stay byte for byte', async () => {
    const repo = fleet();
    const before = outsideNewCluster(repo);
    const infra = await generate(options(repo));
    expect(infra.summary.environment_model).toBe('flux-example');
    expect(infra.summary.reference_domain).toBe('staging.example.net');
    expect(infra.summary.hosts).toEqual([
      { from: EXAMPLE_HOSTS.wildcard, to: '*.acme.io' },
      { from: EXAMPLE_HOSTS.api, to: 'api.acme.io' },
      { from: EXAMPLE_HOSTS.podinfo, to: 'podinfo.acme.io' },
      { from: EXAMPLE_HOSTS.status, to: 'status.acme.io' },
    ]);
    // In this layout nothing holds a Secret: the whole cluster goes out in the first pass.
    expect(infra.summary.kustomizations.map((k) => k.name).sort()).toEqual([
      'apps',
      'flux-system',
      'infra-configs',
      'infra-controllers',
    ]);
    expect(infra.summary.validated).toHaveLength(4);
    const full = await generate(options(repo, { pass: 'full', sealingCertPem: makeRsaCert().certPem }));
    expect(full.summary.paths_written).toEqual([]);
    expect(full.summary.paths_removed).toEqual([]);
    expect(outsideNewCluster(repo)).toEqual(before);

    const written = Object.keys(readTree(repo)).filter(
      (f) => f.startsWith('clusters/acme/') || f.startsWith('apps/acme/'),
    );
    expect(written).toEqual(
      expect.arrayContaining([
        'clusters/acme/flux-system/gotk-sync.yaml',
        'clusters/acme/infrastructure.yaml',
        'clusters/acme/apps.yaml',
        'apps/acme/kustomization.yaml',
        'apps/acme/podinfo-values.yaml',
      ]),
    );
    expect(written.some((f) => f.startsWith('infrastructure/') || f.startsWith('apps/base/'))).toBe(false);
  });

  it("every Kustomization the new cluster applies builds with its patches: hosts, ACME e-mail and external-dns are the new cluster's", async () => {
    const repo = fleet();
    await generate(options(repo));
    const { declared, syncs, built } = clusterView(repo, 'acme');

    const sync = syncs.find((k) => k.metadata.name === 'flux-system');
    expect(sync.spec.path).toBe('./clusters/acme');
    const apps = syncs.find((k) => k.metadata.name === 'apps');
    expect(apps.spec.path).toBe(artifacts ? './acme' : './apps/acme');
    expect(apps.spec.dependsOn).toEqual([{ name: 'infra-configs' }]);
    expect(syncs.find((k) => k.metadata.name === 'infra-controllers').spec.path).toBe(
      artifacts ? './controllers' : './infrastructure/controllers',
    );
    if (artifacts) {
      const generator = declared.find((o) => o.kind === 'ArtifactGenerator');
      expect(generator.spec.artifacts.find((a: any) => a.name === 'apps').copy).toEqual([
        { from: '@monorepo/apps/base/**', to: '@artifact/base/' },
        { from: '@monorepo/apps/acme/**', to: '@artifact/acme/' },
      ]);
    }

    const objects = Object.values(built).flat();
    const hosts = new Set(objects.flatMap(hostsOf));
    expect([...hosts].sort()).toEqual(NEW_HOSTS);
    const issuer = built['infra-configs'].find((o) => o.kind === 'ClusterIssuer');
    expect(issuer.spec.acme.email).toBe('ops@acme.io');
    expect(issuer.spec.acme.server).toBe(EXAMPLE_ACME_SERVER); // the reference's own patch is kept
    const dns = built['infra-controllers'].find((o) => o.kind === 'HelmRelease' && o.metadata.name === 'external-dns');
    expect(dns.spec.values).toMatchObject({
      domainFilters: ['acme.io'],
      txtOwnerId: 'acme',
      aws: { region: 'us-east-1' },
    });

    // No host, e-mail or domain of the reference environment is left in what the new cluster owns (the
    // ownership markers aside: Flux never reads them, and they record the --host-map that moved those hosts).
    const owned = Object.entries(readTree(repo)).filter(
      ([f]) =>
        (f.startsWith('clusters/acme/') || f.startsWith('apps/acme/')) && !f.endsWith('/.gitops-scaffolder.json'),
    );
    for (const [file, text] of owned) {
      for (const old of [...Object.values(EXAMPLE_HOSTS), 'staging.example.net', EXAMPLE_ACME_EMAIL])
        expect(`${file}: ${text}`).not.toContain(old);
    }
    // The shared ClusterIssuer still names the reference's e-mail: the cluster's own patch changes it.
    expect(readTree(repo)['infrastructure/configs/cluster-issuers.yaml']).toContain(EXAMPLE_ACME_EMAIL);
  });

  it('running the same pass again writes nothing', async () => {
    const repo = fleet();
    await generate(options(repo));
    const again = await generate(options(repo));
    expect(again.summary.paths_written).toEqual([]);
    expect(again.summary.paths_removed).toEqual([]);
  });

  it('a host with no place in the new cluster stops the pass before anything is written, naming every such host and where it is', async () => {
    const repo = fleet();
    const before = readTree(repo);
    const failure = await generate(options(repo, { hostMap: {} })).catch((e) => e);
    expect(failure).toBeInstanceOf(GeneratorInputError);
    expect(failure.message).toContain(
      'podinfo.staging (apps/staging/podinfo-values.yaml HelmRelease podinfo/podinfo spec.values.ingress.hosts[0].host)',
    );
    expect(failure.message).toContain('apps/staging/routes.yaml Certificate podinfo spec.dnsNames[0]');
    expect(failure.message).toContain('--host-map');
    expect(failure.message).not.toContain('api.staging.example.net'); // under the reference domain: it moves by itself
    expect(readTree(repo)).toEqual(before);
  });

  it('--host-map for a host the reference does not have, and a malformed host, are refused', async () => {
    await expect(
      generate(options(fleet(), { hostMap: { ...HOST_MAP, 'podinfo.stagign': 'x.acme.io' } })),
    ).rejects.toThrow('--host-map podinfo.stagign: the reference environment has no host podinfo.stagign');
    await expect(generate(options(fleet(), { hostMap: { [EXAMPLE_HOSTS.podinfo]: 'Podinfo ACME' } }))).rejects.toThrow(
      GeneratorInputError,
    );
  });

  it('--reference-domain overrides the domain learned from external-dns', async () => {
    const repo = fleet();
    const { summary } = await generate(options(repo, { referenceDomain: 'example.net' }));
    expect(summary.reference_domain).toBe('example.net');
    expect(summary.hosts).toContainEqual({ from: EXAMPLE_HOSTS.api, to: 'api.staging.acme.io' });
  });
});

describe.each([
  ["into the reference's own repository", true],
  ['into a separate empty repository', false],
])("generator, Flux's example with flux-system placeholders (not yet bootstrapped) %s", (_title, sameRepo) => {
  /** Upstream's reference (Flux 2.7 layout, placeholder gotk files) and the repository the pass writes to. */
  function placeholderFleet() {
    const reference = tempDir('fx-placeholders');
    writeFluxExampleReference(reference, { artifacts: true, bootstrapPlaceholders: true });
    const repo = sameRepo ? reference : tempDir('fx-placeholders-target');
    return { reference, repo, options: firstPass(repo, reference) };
  }

  it('carries the placeholders over, so the new flux-system builds, and validates the entry folder', async () => {
    const { reference, repo, options } = placeholderFleet();
    const referenceBefore = outsideNewCluster(reference);
    const { summary } = await generate(options);
    // The entry folder is built even though no Kustomization of the reference declares it.
    expect(summary.validated).toContain('./clusters/acme');

    const flux = join(repo, 'clusters/acme/flux-system');
    for (const file of ['gotk-components.yaml', 'gotk-sync.yaml'])
      expect(readFileSync(join(flux, file), 'utf8')).toBe(UPSTREAM_BOOTSTRAP_PLACEHOLDER);
    expect(readFileSync(join(flux, 'kustomization.yaml'), 'utf8')).toBe(UPSTREAM_FLUX_SYSTEM_KUSTOMIZATION);
    expect(kustomize(flux)).toEqual([]); // nothing to apply until flux bootstrap writes the two files
    const { syncs, built } = clusterView(repo, 'acme');
    expect(syncs.map((k) => k.metadata.name).sort()).toEqual(['apps', 'infra-configs', 'infra-controllers']);
    expect(Object.values(built).every((objects) => objects.length > 0)).toBe(true);

    const again = await generate(options);
    expect(again.summary.paths_written).toEqual([]);
    expect(again.summary.paths_removed).toEqual([]);
    expect(outsideNewCluster(reference)).toEqual(referenceBefore);
  });

  it('an entry folder that does not build fails validation, writing nothing', async () => {
    const { reference, repo, options } = placeholderFleet();
    const kustomization = join(reference, 'clusters/staging/flux-system/kustomization.yaml');
    writeFileSync(kustomization, UPSTREAM_FLUX_SYSTEM_KUSTOMIZATION.replace('- gotk-sync.yaml', '- gotk-patches.yaml'));
    const before = readTree(repo);
    const failure = await generate(options).catch((e) => e);
    expect(failure).toBeInstanceOf(GeneratorValidationError);
    expect(failure.message).toMatch(
      /^kustomize build of Kustomization flux-system \(\.\/clusters\/acme\) failed: .*gotk-patches\.yaml/,
    );
    expect(readTree(repo)).toEqual(before);
  });
});

describe('generator, Flux example layout that Flux could not build', () => {
  it('an overlay kustomize cannot build fails validation (exit 1 in the CLI), writing nothing', async () => {
    const { reference, repo, options } = exampleFleet({});
    writeFileSync(
      join(reference, 'apps/staging/kustomization.yaml'),
      readFileSync(join(reference, 'apps/staging/kustomization.yaml'), 'utf8') + '  - path: no-such-patch.yaml\n',
    );
    const before = readTree(repo);
    const failure = await generate(options).catch((e) => e);
    expect(failure).toBeInstanceOf(GeneratorValidationError);
    expect(failure.message).toMatch(
      /^kustomize build of Kustomization apps \(\.\/apps\/acme\) failed: .*no-such-patch\.yaml/,
    );
    expect(readTree(repo)).toEqual(before);
  });

  it('a Kustomization path that no ArtifactGenerator rule fills is refused, writing nothing', async () => {
    const { reference, repo, options } = exampleFleet({ artifacts: true });
    const artifacts = join(reference, 'clusters/staging/artifacts.yaml');
    writeFileSync(
      artifacts,
      readFileSync(artifacts, 'utf8').replace(
        /\n {8}- from: "@monorepo\/apps\/staging\/\*\*"\n {10}to: "@artifact\/staging\/"/,
        '',
      ),
    );
    const before = readTree(repo);
    const failure = await generate(options).catch((e) => e);
    expect(failure).toBeInstanceOf(GeneratorInputError);
    expect(failure.message).toBe(
      'clusters/staging/apps.yaml Kustomization apps: path ./staging is not in artifact apps: no copy rule of the ArtifactGenerator writes there',
    );
    expect(readTree(repo)).toEqual(before);
  });
});

describe('generator, Flux example layout with a Secret in the environment overlay', () => {
  const cert = makeRsaCert();
  it('the Kustomization applying it (and its folder) waits for the full pass; the full pass seals it for the new cluster', async () => {
    const { repo, options: base } = exampleFleet({ secret: true });

    const infra = await generate(base);
    expect(infra.summary.kustomizations.map((k) => k.name)).not.toContain('app-secrets');
    const afterInfra = readTree(repo);
    expect(Object.keys(afterInfra).filter((f) => f.startsWith('apps/acme/secrets/'))).toEqual([]);
    expect(afterInfra['clusters/acme/apps.yaml']).not.toContain('app-secrets');

    const full = await generate({ ...base, pass: 'full', sealingCertPem: cert.certPem });
    expect(full.summary.kustomizations.map((k) => k.name)).toContain('app-secrets');
    const sealed = yamlObjects(join(repo, 'apps/acme/secrets/redis-auth.yaml'))[0];
    expect(sealed.kind).toBe('SealedSecret');
    const opened = unsealManifest(cert.privateKeyPem, sealed);
    expect(opened.password).toHaveLength(40);
    expect(opened.password).not.toContain('staging-redis-password');
    const { built } = clusterView(repo, 'acme');
    expect(built['app-secrets'].map((o) => o.kind)).toEqual(['SealedSecret']);
  });
});

describe('generator, Flux example layout whose Kustomization substitutes its own values (postBuild.substitute)', () => {
  it("values naming the reference cluster become the new cluster's, and the substituted route is checked", async () => {
    const { repo, options } = exampleFleet({ substitution: true });
    const { summary } = await generate(options);
    expect(summary.hosts).toContainEqual({ from: 'docs.staging.example.net', to: 'docs.acme.io' });
    const { syncs, built } = clusterView(repo, 'acme');
    const apps = syncs.find((k) => k.metadata.name === 'apps');
    expect(apps.spec.postBuild.substitute).toEqual({ APP_DOMAIN: 'acme.io', CLUSTER_NAME: 'acme' });
    // Flux substitutes after the build: done here by hand for the one route that uses the variables.
    const docs = built.apps.find((o) => o.metadata.name === 'podinfo-docs');
    expect(docs.spec.hostnames).toEqual(['docs.${APP_DOMAIN}']);
    expect(docs.spec.hostnames[0].replace('${APP_DOMAIN}', apps.spec.postBuild.substitute.APP_DOMAIN)).toBe(
      'docs.acme.io',
    );
  });
});

describe('generate-gitops-env on a Flux example layout', () => {
  const run = (args: string[]) =>
    spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: childEnv(CLI_REGISTRY_ENV) });
  it('exit 2 listing the unmapped hosts, then exit 0 with --host-map; another layout reads --reference-domain but refuses --host-map', () => {
    const { reference, repo } = exampleFleet({ artifacts: true });
    const cluster = [
      '--cluster-name',
      'acme',
      '--domain',
      'acme.io',
      '--region',
      'us-east-1',
      '--acme-email',
      'ops@acme.io',
      '--infra-only',
    ];
    const common = ['--repo', repo, '--template', reference, '--reference-env', 'staging', ...cluster, ...SOURCE_URL];
    const refused = run(common);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('podinfo.staging (apps/staging/podinfo-values.yaml');
    const done = run([...common, '--host-map', 'podinfo.staging=podinfo.acme.io', '--json']);
    expect(done.stderr).toBe('');
    expect(done.status).toBe(0);
    expect(JSON.parse(done.stdout)).toMatchObject({
      environment_model: 'flux-example',
      hosts: expect.arrayContaining([{ from: 'podinfo.staging', to: 'podinfo.acme.io' }]),
    });
    const text = run([...common, '--host-map', 'podinfo.staging=podinfo.acme.io']);
    expect(text.stdout).toContain('host podinfo.staging -> podinfo.acme.io');
    const overlays = run([
      '--repo',
      tempDir('fx-cli-other'),
      ...cluster,
      ...SOURCE_URL,
      '--reference-domain',
      'dev.example.net',
      '--json',
    ]);
    expect(overlays.stderr).toBe('');
    expect(overlays.status).toBe(0);
    expect(JSON.parse(overlays.stdout)).toMatchObject({
      environment_model: 'overlays',
      reference_domain: 'dev.example.net',
    });
    const mapped = run([
      '--repo',
      tempDir('fx-cli-other'),
      ...cluster,
      ...SOURCE_URL,
      '--host-map',
      'podinfo.staging=podinfo.acme.io',
    ]);
    expect(mapped.status).toBe(2);
    expect(mapped.stderr).toContain("--host-map is read for references in the layout of Flux's example repository");
  });

  it('--dry-run names the files it copies unchanged (a count and their paths), never their content', () => {
    const { reference } = exampleFleet({ artifacts: true });
    // A bootstrapped gotk-components.yaml is some 10,000 lines: a stand-in as long, every line its own.
    const body = Array.from({ length: 10_000 }, (_, i) => `  component-line-${i}: "flux manifest ${i}"`);
    const components = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gotk-stand-in\n  namespace: flux-system\ndata:\n${body.join('\n')}\n`;
    writeFileSync(join(reference, 'clusters/staging/flux-system/gotk-components.yaml'), components);
    const repo = tempDir('fx-cli-dry');
    const args = [
      ...SOURCE_URL,
      '--repo',
      repo,
      '--template',
      reference,
      '--reference-env',
      'staging',
      '--cluster-name',
      'acme',
      '--domain',
      'acme.io',
      '--region',
      'us-east-1',
      '--acme-email',
      'ops@acme.io',
      '--infra-only',
      '--host-map',
      'podinfo.staging=podinfo.acme.io',
      '--dry-run',
    ];
    const shown = run(args);
    expect(shown.stderr).toBe('');
    expect(shown.status).toBe(0);
    expect(readdirSync(repo)).toEqual([]);

    // The same plan as JSON, for the list of copies (its builds were checked by the run above).
    const { changes } = JSON.parse(run([...args, '--json', '--no-validate']).stdout);
    const copied = changes.filter((c: any) => c.copied_from !== undefined);
    expect(JSON.stringify(changes).length).toBeLessThan(30_000); // a copy's diff is one line naming it
    expect(copied.map((c: any) => c.path)).toEqual(
      expect.arrayContaining([
        'clusters/acme/flux-system/gotk-components.yaml',
        'infrastructure/controllers/cert-manager.yaml',
        'apps/base/podinfo/release.yaml',
      ]),
    );
    expect(shown.stdout).toContain(`${copied.length} files copied unchanged from the reference (content not shown):\n`);
    for (const c of copied)
      expect(shown.stdout).toContain(
        `  added    ${c.path}${c.copied_from === c.path ? '' : ` (from ${c.copied_from})`}\n`,
      );
    expect(shown.stdout).toContain(
      '  added    clusters/acme/flux-system/gotk-components.yaml (from clusters/staging/flux-system/gotk-components.yaml)\n',
    );
    // Rewritten files still show their diff.
    expect(shown.stdout).toContain('+++ b/clusters/acme/infrastructure.yaml');
    // The copied content is not printed: no line of it, and the output stays small.
    expect(body.filter((line) => shown.stdout.includes(line.trim()))).toEqual([]);
    expect(shown.stdout).not.toContain('installCRDs: true'); // the shared cert-manager.yaml's body
    expect(shown.stdout.length).toBeLessThan(30_000);
  }, 180_000); // two runs of the command line over a 10,000-line file, on a shared machine
});
