/**
 * Issue #29, item 5: a Flux Operator fleet as the reference. The cluster's entry point is a
 * FluxInstance's spec.sync (not gotk-sync.yaml), and its values are the flux-runtime-info ConfigMap
 * the Kustomizations substitute. The new cluster gets its own FluxInstance and runtime info.
 */
import { cpSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { generate, GenerateOptions } from '#libs/generator';
import { makeRsaCert } from '../support/certs';
import { acmeFirstPass } from '../support/new-cluster';
import { ageIdentity } from '../support/sops-open';
import { readTree, tempDir, yamlObjects } from '../support/files';
import { fluxGraph, parseYaml } from '../support/flux-build';

const FIXTURE = join(__dirname, '../fixtures/flux-operator-fleet');
const REFERENCE_VALUES = ['staging.example.com', 'staging-1', 'eu-west-2', 'example-org/fleet.git'];

/** Flux's post-build substitution of `${VAR}` (no defaults are used by the fixture). */
const substitute = (objects: any[], vars: Record<string, string>) =>
  parseYaml(
    objects
      .map((o) => stringify(o))
      .join('---\n')
      .replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (all, name) => vars[name] ?? all),
  );

/**
 * Every Flux Kustomization the new cluster runs, from the Kustomization Flux Operator creates for
 * the FluxInstance's spec.sync down every one it applies, with what each applies after substitution.
 */
function operatorGraph(repo: string, cluster: string) {
  const instance = yamlObjects(join(repo, `clusters/${cluster}/flux-system/flux-instance.yaml`))[0];
  const vars = yamlObjects(join(repo, `clusters/${cluster}/flux-system/runtime-info.yaml`))[0].data;
  const graph = fluxGraph(repo, instance.spec.sync.path, (k, objects) =>
    k.spec.postBuild?.substituteFrom ? substitute(objects, vars) : objects,
  );
  return { instance, vars, graph: new Map([...graph].map(([name, { objects }]) => [name, objects])) };
}

const INSTANCE = 'clusters/staging/flux-system/flux-instance.yaml';

/** Rewrites one file of a repository. */
const edit = (root: string, file: string, change: (text: string) => string) =>
  writeFileSync(join(root, file), change(readTree(root)[file]));

const outsideNew = (repo: string) =>
  Object.fromEntries(Object.entries(readTree(repo)).filter(([f]) => !f.startsWith('clusters/acme/')));

describe('generator, a Flux Operator fleet (FluxInstance entry point, flux-runtime-info values)', () => {
  const fleet = () => {
    const reference = tempDir('flux-operator-reference');
    cpSync(FIXTURE, reference, { recursive: true });
    const repo = tempDir('flux-operator-fleet');
    cpSync(FIXTURE, repo, { recursive: true });
    const options = (extra: Partial<GenerateOptions> = {}): GenerateOptions =>
      acmeFirstPass(repo, reference, {
        sourceUrl: 'https://git.acme.io/platform/fleet.git',
        sourceBranch: 'acme',
        clusterVars: { ENVIRONMENT: 'production' },
        ...extra,
      });
    return { reference, repo, options };
  };

  it('gives the new cluster its own FluxInstance and runtime info, validated as the operator applies them; a second run writes nothing', async () => {
    const { reference, repo, options } = fleet();
    const referenceBefore = readTree(reference);
    const repoBefore = outsideNew(repo);

    const infra = await generate(options());
    expect(infra.summary.environment_model).toBe('cluster-vars');
    expect(infra.summary.reference_domain).toBe('staging.example.com');
    expect(infra.summary.reference_region).toBe('eu-west-2');
    expect(infra.summary.kustomizations).toEqual([
      { name: 'flux-system', path: './clusters/acme', dependsOn: [] },
      { name: 'apps', path: './apps', dependsOn: ['tenants'] },
      { name: 'tenants', path: './tenants', dependsOn: [] },
    ]);
    expect(infra.summary.validated).toEqual(expect.arrayContaining(['clusters/acme', 'apps', 'tenants']));
    // The FluxInstance is checked against its schema; the ResourceSets have none and are said to have none.
    expect(infra.summary.schema_checked!.kinds_without_schema).toEqual(['fluxcd.controlplane.io/v1 ResourceSet']);
    expect(infra.summary.cluster_vars_inherited).toEqual(['ARTIFACT_TAG']);
    expect(infra.summary.warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /clusters\/acme\/flux-system\/flux-instance.yaml: FluxInstance flux logs in with Secret flux-system\/flux-system, which the repository does not hold/,
        ),
      ]),
    );
    expect(infra.summary.warnings.filter((w) => w.includes('still holds'))).toEqual([]);
    // Flux generates the cluster folder's kustomization: none is written.
    expect(existsSync(join(repo, 'clusters/acme/kustomization.yaml'))).toBe(false);

    const { instance, vars, graph } = operatorGraph(repo, 'acme');
    expect(instance.spec.sync).toEqual({
      kind: 'GitRepository',
      url: 'https://git.acme.io/platform/fleet.git',
      ref: 'refs/heads/acme',
      path: 'clusters/acme',
      pullSecret: 'flux-system',
    });
    // Everything else of the FluxInstance is the reference's.
    const referenceInstance = yamlObjects(join(reference, 'clusters/staging/flux-system/flux-instance.yaml'))[0];
    expect({ ...instance.spec, sync: undefined }).toEqual({ ...referenceInstance.spec, sync: undefined });
    expect(vars).toEqual({
      ARTIFACT_TAG: 'latest',
      ENVIRONMENT: 'production',
      CLUSTER_NAME: 'acme',
      CLUSTER_DOMAIN: 'acme.io',
      CLUSTER_REGION: 'us-east-1',
    });
    const runtimeInfo = yamlObjects(join(repo, 'clusters/acme/flux-system/runtime-info.yaml'))[0];
    expect(runtimeInfo.metadata.labels['reconcile.fluxcd.io/watch']).toBe('Enabled');

    expect([...graph.keys()].sort()).toEqual(['apps', 'flux-system', 'tenants']);
    const applied = [...graph.values()].flat();
    const ingress = applied.find((o) => o.kind === 'Ingress');
    expect(ingress.spec.rules.map((r: any) => r.host)).toEqual(['podinfo.acme.io']);
    expect(applied.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'cluster-info').data).toEqual({
      cluster: 'acme',
      domain: 'acme.io',
      tag: 'latest',
    });
    const text = JSON.stringify(applied);
    for (const value of REFERENCE_VALUES) expect(text).not.toContain(value);

    // The fleet holds no Secret (its pull secret is made at bootstrap): the full pass adds nothing, with either backend.
    const full = await generate(options({ pass: 'full', sealingCertPem: makeRsaCert().certPem }));
    expect(full.summary.paths_written).toEqual([]);
    const sops = await generate(
      options({ pass: 'full', secretsBackend: 'sops', ageRecipients: [ageIdentity().recipient] }),
    );
    expect(sops.summary.paths_written).toEqual([]);
    const again = await generate(options());
    expect(again.summary.paths_written).toEqual([]);
    expect(again.summary.paths_removed).toEqual([]);

    expect(readTree(reference)).toEqual(referenceBefore);
    expect(outsideNew(repo)).toEqual(repoBefore);
  });

  it('refuses a FluxInstance field the operator does not know before anything is written', async () => {
    const { reference, repo, options } = fleet();
    edit(reference, INSTANCE, (text) => text.replace('pullSecret', 'pullSecrets'));
    await expect(generate(options())).rejects.toThrow(
      /FluxInstance flux-system\/flux: spec.sync.pullSecrets unknown field/,
    );
    expect(existsSync(join(repo, 'clusters/acme'))).toBe(false);
  });

  it('syncs from an OCI artifact as d2-fleet does: the path moves, the artifact URL and tag stay, and the summary says why', async () => {
    const { reference, repo, options } = fleet();
    edit(reference, INSTANCE, (text) =>
      text
        .replace('kind: GitRepository', 'kind: OCIRepository')
        .replace('"https://github.com/example-org/fleet.git"', '"oci://ghcr.io/example-org/fleet"')
        .replace('"refs/heads/main"', '"latest"'),
    );
    for (const file of ['clusters/staging/tenants.yaml', 'clusters/staging/apps.yaml'])
      edit(reference, file, (text) => text.replace('kind: GitRepository', 'kind: OCIRepository'));

    const run = await generate(options());
    const instance = yamlObjects(join(repo, 'clusters/acme/flux-system/flux-instance.yaml'))[0];
    expect(instance.spec.sync).toEqual({
      kind: 'OCIRepository',
      url: 'oci://ghcr.io/example-org/fleet',
      ref: 'latest',
      path: 'clusters/acme',
      pullSecret: 'flux-system',
    });
    expect(run.summary.warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/flux-instance.yaml: FluxInstance flux syncs from a OCIRepository; the source URL given/),
        expect.stringMatching(/which has no branch; spec.sync.ref stays "latest"/),
      ]),
    );
    expect(run.summary.validated).toEqual(expect.arrayContaining(['clusters/acme', 'apps', 'tenants']));
  });

  it('substitutes the cluster folder itself when the FluxInstance patches postBuild into its sync Kustomization', async () => {
    const { reference, repo, options } = fleet();
    const substituted = (annotation: string) =>
      edit(reference, INSTANCE, (text) =>
        text
          .replace('spec:\n', `spec:\n  commonMetadata:\n    annotations:\n      cluster-region: "${annotation}"\n`)
          .replace(
            '    patches:\n',
            [
              '    patches:',
              '      - target:',
              '          kind: Kustomization',
              '          name: flux-system',
              '        patch: |',
              '          - op: add',
              '            path: /spec/postBuild',
              '            value:',
              '              substituteFrom:',
              '                - kind: ConfigMap',
              '                  name: flux-runtime-info',
              '                  optional: true',
              '',
            ].join('\n'),
          ),
      );
    const original = readTree(reference)[INSTANCE];
    substituted('${CLUSTER_REGION}');
    await generate(options());
    const instance = yamlObjects(join(repo, 'clusters/acme/flux-system/flux-instance.yaml'))[0];
    expect(instance.spec.commonMetadata.annotations['cluster-region']).toBe('${CLUSTER_REGION}');
    expect(instance.spec.kustomize.patches[0].target).toEqual({ kind: 'Kustomization', name: 'flux-system' });

    // A variable the runtime info does not define is what Flux would substitute with an empty string: refused.
    writeFileSync(join(reference, INSTANCE), original);
    substituted('${CLUSTER_ZONE}');
    rmSync(join(repo, 'clusters/acme'), { recursive: true, force: true });
    await expect(generate(options())).rejects.toThrow(
      /clusters\/acme builds FluxInstance flux with undefined \$\{CLUSTER_ZONE\}/,
    );
    expect(existsSync(join(repo, 'clusters/acme'))).toBe(false);
  });

  it("reads a FluxInstance fleet without runtime values in the layout of Flux's example, repointing its sync", async () => {
    const { reference, repo, options } = fleet();
    rmSync(join(reference, 'clusters/staging/apps.yaml'));
    rmSync(join(reference, 'clusters/staging/flux-system/runtime-info.yaml'));
    edit(reference, 'clusters/staging/flux-system/kustomization.yaml', (text) =>
      text.replace('  - runtime-info.yaml\n', ''),
    );
    edit(reference, 'clusters/staging/tenants.yaml', (text) => text.replace(/ {2}postBuild:[^]*$/, ''));

    const run = await generate(options({ clusterVars: {} }));
    expect(run.summary.environment_model).toBe('flux-example');
    const instance = yamlObjects(join(repo, 'clusters/acme/flux-system/flux-instance.yaml'))[0];
    expect(instance.spec.sync).toMatchObject({
      url: 'https://git.acme.io/platform/fleet.git',
      ref: 'refs/heads/acme',
      path: 'clusters/acme',
    });
    expect(run.summary.validated).toEqual(expect.arrayContaining(['./clusters/acme', './tenants']));
  });

  /**
   * The fleet with its environment outside clusters/ (kubernetes/staging, home-ops style), its
   * FluxInstance syncing the environment folder itself or a folder inside it (kubernetes/staging/flux).
   */
  const folderFormFleet = (entry: '' | '/flux') => {
    const copy = (name: string) => {
      const root = tempDir(name);
      cpSync(FIXTURE, root, { recursive: true });
      mkdirSync(join(root, `kubernetes/staging${entry}`), { recursive: true });
      for (const file of ['flux-system', 'apps.yaml', 'tenants.yaml'])
        renameSync(join(root, 'clusters/staging', file), join(root, `kubernetes/staging${entry}`, file));
      rmSync(join(root, 'clusters'), { recursive: true });
      edit(root, `kubernetes/staging${entry}/flux-system/flux-instance.yaml`, (text) =>
        text
          .replace('path: "clusters/staging"', `path: "kubernetes/staging${entry}"`)
          .replace('!/clusters', '!/kubernetes'),
      );
      return root;
    };
    const reference = copy('flux-operator-kubernetes-reference');
    const repo = copy('flux-operator-kubernetes-fleet');
    return {
      repo,
      options: (extra: Partial<GenerateOptions> = {}) =>
        acmeFirstPass(repo, reference, {
          referenceEnv: 'kubernetes/staging',
          sourceUrl: 'https://git.acme.io/platform/fleet.git',
          sourceBranch: 'acme',
          ...extra,
        }),
    };
  };

  it.each(['', '/flux'] as const)(
    'takes the FluxInstance as the entry of an environment folder outside clusters/ (sync over kubernetes/staging%s): the new cluster goes beside it',
    async (entry) => {
      const { repo, options } = folderFormFleet(entry);
      const infra = await generate(options());
      expect(infra.summary.environment_model).toBe('cluster-vars');
      // The domain and region come from the runtime info (no external-dns in the fleet).
      expect(infra.summary.reference_domain).toBe('staging.example.com');
      expect(infra.summary.reference_region).toBe('eu-west-2');
      expect(infra.summary.kustomizations).toEqual([
        { name: 'flux-system', path: `./kubernetes/acme${entry}`, dependsOn: [] },
        { name: 'apps', path: './apps', dependsOn: ['tenants'] },
        { name: 'tenants', path: './tenants', dependsOn: [] },
      ]);
      expect(infra.summary.validated).toEqual(expect.arrayContaining([`kubernetes/acme${entry}`, 'apps', 'tenants']));
      const instance = yamlObjects(join(repo, `kubernetes/acme${entry}/flux-system/flux-instance.yaml`))[0];
      expect(instance.spec.sync).toMatchObject({
        url: 'https://git.acme.io/platform/fleet.git',
        ref: 'refs/heads/acme',
        path: `kubernetes/acme${entry}`,
      });
      const runtime = yamlObjects(join(repo, `kubernetes/acme${entry}/flux-system/runtime-info.yaml`))[0].data;
      expect(runtime).toMatchObject({ CLUSTER_NAME: 'acme', CLUSTER_DOMAIN: 'acme.io', CLUSTER_REGION: 'us-east-1' });
      // --reference-domain wins over the runtime info's value, for this layout as for every other.
      const given = await generate(options({ referenceDomain: 'example.com' }));
      expect(given.summary.reference_domain).toBe('example.com');
    },
  );
});
