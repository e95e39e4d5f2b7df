/**
 * Issue #29: folders read the way Flux reads them. A folder a Flux Kustomization applies may have
 * no kustomization.yaml (kustomize-controller generates one from its manifests), and Kustomizations
 * may be nested (applied by a folder another Kustomization applies) to any depth; passes,
 * `dependsOn` and validation follow that whole graph.
 */
import { cpSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate, GenerateOptions, GeneratorInputError } from '#libs/generator';
import { makeRsaCert } from '../support/certs';
import { readTree, tempDir, writeTree, yamlObjects } from '../support/files';
import { fluxGraph } from '../support/flux-build';
import { exampleFirstPass, writeFluxExampleReference } from '../support/flux-example-repo';
import { writeSettingsReference } from '../support/reference-repos';

const outside = (repo: string, prefixes: string[]) =>
  Object.fromEntries(Object.entries(readTree(repo)).filter(([f]) => !prefixes.some((p) => f.startsWith(p))));

describe("generator, Flux's example layout with nested Kustomizations over folders without kustomization.yaml", () => {
  const NEW = ['clusters/acme/', 'apps/acme/', 'apps/extras/acme/', 'apps/smoke/acme/'];
  const fleet = () => {
    const reference = tempDir('nested-reference');
    writeFluxExampleReference(reference, { nested: true });
    const repo = tempDir('nested-fleet');
    cpSync(reference, repo, { recursive: true });
    const options = (extra: Partial<GenerateOptions> = {}) => exampleFirstPass(repo, reference, extra);
    return { reference, repo, options };
  };

  it('scaffolds both passes, every folder of the graph builds as Flux builds it, a second run writes nothing, the reference is unchanged', async () => {
    const { reference, repo, options } = fleet();
    const referenceBefore = readTree(reference);
    const repoBefore = outside(repo, NEW);

    const infra = await generate(options());
    // The nested Kustomizations are validated too: the dependsOn of monitoring on them holds.
    expect(infra.summary.validated).toEqual(
      expect.arrayContaining([
        './apps/acme',
        './apps/extras/acme',
        './apps/smoke/acme',
        './infrastructure/monitoring',
        './clusters/acme',
      ]),
    );
    const full = await generate(options({ pass: 'full', sealingCertPem: makeRsaCert().certPem }));
    expect(full.summary.paths_written).toEqual([]);
    const again = await generate(options({ pass: 'full', sealingCertPem: makeRsaCert().certPem }));
    expect(again.summary.paths_written).toEqual([]);
    expect(again.summary.paths_removed).toEqual([]);

    const graph = fluxGraph(repo, './clusters/acme');
    expect([...graph.keys()].sort()).toEqual([
      'apps',
      'apps-extras',
      'apps-smoke',
      'flux-system',
      'infra-configs',
      'infra-controllers',
      'monitoring',
    ]);
    // Nested Kustomizations apply the new cluster's folders, never the reference's.
    expect(graph.get('apps-extras')!.k.spec.path).toBe('./apps/extras/acme');
    expect(graph.get('apps-smoke')!.k.spec.path).toBe('./apps/smoke/acme');
    // A generated kustomization: files down the tree, the README left out.
    expect(
      graph
        .get('apps-extras')!
        .objects.map((o) => o.metadata.name)
        .sort(),
    ).toEqual(['apps-smoke', 'podinfo-extras', 'podinfo-probe']);
    expect(
      graph
        .get('monitoring')!
        .objects.map((o) => `${o.kind}/${o.metadata.name}`)
        .sort(),
    ).toEqual(['ConfigMap/podinfo-dashboard', 'Namespace/monitoring']);
    const names = new Set(graph.keys());
    for (const { k } of graph.values()) for (const d of k.spec?.dependsOn ?? []) expect(names.has(d.name)).toBe(true);
    expect(existsSync(join(repo, 'apps/extras/acme/kustomization.yaml'))).toBe(false);

    expect(readTree(reference)).toEqual(referenceBefore);
    expect(outside(repo, NEW)).toEqual(repoBefore);
  });

  it('refuses a dependsOn on a Kustomization the graph does not have', async () => {
    const { reference, options } = fleet();
    const file = join(reference, 'clusters/staging/monitoring.yaml');
    writeFileSync(file, readTree(reference)['clusters/staging/monitoring.yaml'].replace('apps-smoke', 'apps-gone'));
    await expect(generate(options())).rejects.toThrow(
      /monitoring depends on apps-gone, which this pass does not apply/,
    );
  });

  it('refuses a YAML file that is no Kubernetes object in a folder Flux generates the kustomization of, as Flux would fail on it', async () => {
    const { reference, options } = fleet();
    writeTree(reference, { 'apps/extras/staging/values.yaml': 'replicaCount: 2\n' });
    const run = generate(options());
    await expect(run).rejects.toThrow(GeneratorInputError);
    await expect(run).rejects.toThrow(
      /apps\/extras\/staging\/values.yaml is not a Kubernetes manifest .*has no kustomization.yaml/,
    );
  });

  // Issue #47: kustomize-controller builds such a folder with LoadRestrictionsNone; here the build of
  // a kustomization below it (with an inline generator reading the process's environment, its value
  // copied into an Ingress host whose check once quoted it) is refused before it runs, naming the file.
  it('refuses a kustomization below such a folder whose inline generator reads outside the repository, naming it and quoting nothing', async () => {
    const { reference, options } = fleet();
    writeTree(reference, leakingKustomization('apps/extras/staging/leak', 'leak.staging.example.net'));
    const refusal = await refusalOfBothPasses(options);
    expect(refusal).toBeInstanceOf(GeneratorInputError);
    expect(refusal!.message).toMatch(
      /^apps\/extras\/acme\/leak\/kustomization\.yaml: generators\[\]\.ConfigMapGenerator\.files entry "\/proc\/self\/environ" leads outside the repository/,
    );
    expect(refusal!.message).not.toContain(CANARY);
  });
});

const CANARY = 'canary-value-5c1d7e0b';

/** A kustomization at `dir` whose inline generator reads the process's environment into an Ingress host. */
function leakingKustomization(dir: string, host: string): Record<string, string> {
  const generator = [
    'apiVersion: builtin',
    'kind: ConfigMapGenerator',
    'metadata: {name: leak}',
    'options: {disableNameSuffixHash: true}',
    'files: [leak=/proc/self/environ]',
  ].join('\n');
  return {
    [`${dir}/kustomization.yaml`]: [
      'resources: [ingress.yaml]',
      'generators:',
      `  - |\n${generator.replace(/^/gm, '    ')}`,
      'replacements:',
      '  - source: {kind: ConfigMap, name: leak, fieldPath: data.leak}',
      '    targets: [{select: {kind: Ingress}, fieldPaths: [spec.rules.0.host]}]',
      '',
    ].join('\n'),
    [`${dir}/ingress.yaml`]: `apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: leak, namespace: default}\nspec:\n  rules: [{host: ${host}}]\n`,
  };
}

/** How the infra pass, then the full pass, fail (undefined: they do not), with a canary in the environment kubectl would inherit. */
async function refusalOfBothPasses(options: (extra?: Partial<GenerateOptions>) => GenerateOptions) {
  process.env.TENANT_CANARY_47 = CANARY;
  try {
    await generate(options());
    await generate(options({ pass: 'full', sealingCertPem: makeRsaCert().certPem }));
    return undefined;
  } catch (e) {
    return e as Error;
  } finally {
    delete process.env.TENANT_CANARY_47;
  }
}

describe('generator, cluster-vars model with a Flux-applied folder without kustomization.yaml', () => {
  const settingsFleet = () => {
    const reference = tempDir('generated-settings');
    writeSettingsReference(reference, { generatedApps: true });
    const repo = tempDir('generated-settings-repo');
    const options = (extra: Partial<GenerateOptions> = {}): GenerateOptions => ({
      repoDir: repo,
      templateDir: reference,
      referenceEnv: 'staging',
      clusterName: 'shop-eu',
      domain: 'shop-eu.example.net',
      region: 'eu-north-1',
      acmeEmail: 'infra@example.net',
      pass: 'infra',
      ...extra,
    });
    return { reference, repo, options };
  };

  it('reads and builds apps/staging as Flux generates its kustomization, through both passes; a second run writes nothing', async () => {
    const { reference, repo, options } = settingsFleet();
    const referenceBefore = readTree(reference);
    const cert = makeRsaCert();
    const infra = await generate(options({}));
    // smoke depends on shop-extras, which apps applies: both wait, with apps, for the full pass.
    expect(infra.summary.kustomizations.map((k) => k.name).sort()).toEqual(['configs', 'controllers', 'flux-system']);
    expect(yamlObjects(join(repo, 'clusters/shop-eu/kustomization.yaml'))[0].resources).not.toContain('smoke.yaml');
    const full = await generate(options({ pass: 'full', sealingCertPem: cert.certPem }));
    expect(full.summary.validated).toEqual(expect.arrayContaining(['apps/staging', 'apps/extras', 'apps/smoke']));
    const again = await generate(options({ pass: 'full', sealingCertPem: cert.certPem }));
    expect(again.summary.paths_written).toEqual([]);

    const graph = fluxGraph(repo, './clusters/shop-eu');
    expect(graph.get('apps')!.k.spec.path).toBe('./apps/staging');
    expect(
      graph
        .get('apps')!
        .objects.map((o) => `${o.kind}/${o.metadata.name}`)
        .sort(),
    ).toEqual([
      'ConfigMap/shop-banner',
      'ConfigMap/shop-motd',
      'Deployment/shop',
      'Ingress/shop',
      'Kustomization/shop-extras',
      'PersistentVolumeClaim/shop-db',
      'ResourceQuota/shop-quota',
    ]);
    expect(graph.get('shop-extras')!.objects.map((o) => o.metadata.name)).toEqual(['shop-greeting']);
    expect(graph.get('smoke')!.k.spec.dependsOn).toEqual([{ name: 'shop-extras' }]);
    expect(existsSync(join(repo, 'apps/staging/kustomization.yaml'))).toBe(false);
    expect(readTree(reference)).toEqual(referenceBefore);
  });

  it('refuses a kustomization below apps/staging whose inline generator reads outside the repository, naming it and quoting nothing', async () => {
    const { reference, options } = settingsFleet();
    writeTree(reference, leakingKustomization('apps/staging/leak', "'leak.${SECRET_DOMAIN}'"));
    const refusal = await refusalOfBothPasses(options);
    expect(refusal).toBeInstanceOf(GeneratorInputError);
    expect(refusal!.message).toMatch(
      // A full-pass folder: the infra pass's rehearsal of the full pass refuses it before anything is written.
      /^refused before the infra pass writes anything, as the full pass that follows it would be: apps\/staging\/leak\/kustomization\.yaml: generators\[\]\.ConfigMapGenerator\.files entry "\/proc\/self\/environ" leads outside the repository/,
    );
    expect(refusal!.message).not.toContain(CANARY);
  });

  it('reads a cluster folder without kustomization.yaml as the one Flux generates for its own sync (every folder below it applied)', async () => {
    // flux bootstrap writes flux-system/kustomization.yaml, not one for the cluster folder: Flux generates that.
    const { reference, options } = settingsFleet();
    rmSync(join(reference, 'clusters/staging/kustomization.yaml'));
    // The generated one lists credentials/ too: the cluster's own sync would apply its Secret first.
    await expect(generate(options())).rejects.toThrow(
      "clusters/staging/credentials/db.yaml holds Secret shop-db, applied by the cluster's own sync in the first pass",
    );
  });
});
