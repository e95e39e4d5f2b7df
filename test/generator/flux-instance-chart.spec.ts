/**
 * Issue #48: joryirving/home-ops (vendored, WTFPL), a Flux Operator fleet installed by Helm. Each cluster folder
 * (kubernetes/clusters/<cluster>/) has no kustomization.yaml (Flux generates one) and its entry point is a
 * HelmRelease of the `flux-instance` chart whose values.instance.sync names the folder. Before: refused as "has no
 * kustomization.yaml"; and the chart's values were nobody's to repoint, so a new cluster would have synced the
 * reference's folder.
 */
import { cpSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate, GenerateOptions } from '#libs/generator';
import { GeneratorInputError } from '#libs/generator/errors';
import { allFiles, tempDir, yamlObjects } from '../support/files';
import { ageIdentity } from '../support/sops-open';

const FIXTURE = join(__dirname, '../fixtures/public/joryirving-home-ops');
const REFERENCE = 'kubernetes/clusters/test';
const NEW = 'kubernetes/clusters/acme';
const RELEASE = 'flux-instance/helmrelease.yaml';
const SOURCE_URL = 'https://git.acme.example.com/platform/acme.git';

describe('generator, joryirving/home-ops (flux-instance chart entry point, cluster folder without kustomization.yaml)', () => {
  const age = ageIdentity();
  const options = (repoDir: string, templateDir = repoDir, extra: Partial<GenerateOptions> = {}): GenerateOptions => ({
    repoDir,
    templateDir,
    referenceEnv: REFERENCE,
    clusterName: 'acme',
    domain: 'acme.example.com',
    region: 'eu-west-1',
    acmeEmail: 'ops@acme.example.com',
    referenceDomain: 'jory.dev',
    pass: 'full',
    secretsBackend: 'sops',
    ageRecipients: [age.recipient],
    ...extra,
  });
  const published = () => {
    const repo = tempDir('jory-home-ops');
    cpSync(FIXTURE, repo, { recursive: true });
    return repo;
  };
  /** Rewrites one file of a repository. */
  const edit = (repo: string, file: string, change: (text: string) => string) =>
    writeFileSync(join(repo, file), change(readFileSync(join(repo, file), 'utf8')));
  /**
   * A user's edit: the test cluster's apps become the app set every cluster runs (kubernetes/apps/shared), without
   * Cilium (its cilium-config applies the cluster's own kubernetes/apps/${CLUSTER}/kube-system/cilium) and without
   * FluxInstance among the event sources of the namespace component's Alert (the schema check knows the Alert
   * CRD Flux ships, whose kinds do not include it; the namespace component and its replacements file, loaded
   * from outside each namespace's folder as kustomize-controller allows, stay).
   */
  const sharedApps = () => {
    const repo = published();
    renameSync(join(repo, 'kubernetes/apps/test'), join(repo, 'kubernetes/apps/shared'));
    edit(repo, `${REFERENCE}/apps.yaml`, (t) => t.replace('./kubernetes/apps/test', './kubernetes/apps/shared'));
    edit(repo, 'kubernetes/apps/shared/kube-system/kustomization.yaml', (t) => t.replace('  - ./cilium.yaml\n', ''));
    edit(repo, 'kubernetes/components/namespace/alerts/alertmanager/alert.yaml', (t) =>
      t.replace('    - kind: FluxInstance\n      name: "*"\n', ''),
    );
    return repo;
  };
  /** What Flux applies of the new cluster's folder: the scaffolder's own hidden marker is none of it. */
  const newClusterFiles = (repo: string) =>
    allFiles(repo)
      .filter((f) => f.startsWith(`${NEW}/`) && !f.split('/').pop()!.startsWith('.'))
      .map((f) => ({ file: f, text: readFileSync(join(repo, f), 'utf8') }));

  it('as published: reads the cluster folder as Flux does and refuses the per-cluster apps folder outside it, naming it', async () => {
    const run = generate(options(published()));
    await expect(run).rejects.toThrow(GeneratorInputError);
    await expect(run).rejects.toThrow(
      /kubernetes\/apps\/test \(spec\.path of Kustomization cluster-apps in kubernetes\/clusters\/test\/apps\.yaml; beside kubernetes\/apps\/main\)/,
    );
    await expect(run).rejects.not.toThrow(/clusters\/test has no kustomization\.yaml/);
  });

  it('reads a nested spec.path as its parent substitutes it (${CLUSTER} from cluster-info) and refuses the folder it names', async () => {
    // Every app of the test cluster shared, Cilium included: its cilium-config still applies the test cluster's own folder.
    const repo = published();
    cpSync(join(repo, 'kubernetes/apps/test'), join(repo, 'kubernetes/apps/shared'), { recursive: true });
    edit(repo, `${REFERENCE}/apps.yaml`, (t) => t.replace('./kubernetes/apps/test', './kubernetes/apps/shared'));
    await expect(generate(options(repo))).rejects.toThrow(
      'kubernetes/apps/test (spec.path of Kustomization cilium-config in kubernetes/apps/shared/kube-system/cilium.yaml; beside kubernetes/apps/main)',
    );
  });

  it("repoints the chart's values.instance.sync to the new folder, repository and branch; nothing of the reference's folder or URL is left", async () => {
    const repo = sharedApps();
    const { summary } = await generate(options(repo, repo, { sourceUrl: SOURCE_URL, sourceBranch: 'acme' }));
    expect(summary.environment_model).toBe('cluster-vars');
    expect(summary.kustomizations).toEqual(
      expect.arrayContaining([{ name: 'flux-system', path: `./${NEW}`, dependsOn: [] }]),
    );
    const [source, release] = yamlObjects(join(repo, NEW, RELEASE));
    expect(source.spec.url).toBe('oci://ghcr.io/controlplaneio-fluxcd/charts/flux-instance');
    expect(release.spec.values.instance.sync).toEqual({
      kind: 'GitRepository',
      name: 'flux-system',
      url: SOURCE_URL,
      ref: 'refs/heads/acme',
      path: NEW,
      interval: '15m',
    });
    // Written as Flux reads it: no kustomization.yaml invented for the new cluster's folder.
    expect(existsSync(join(repo, NEW, 'kustomization.yaml'))).toBe(false);
    expect(yamlObjects(join(repo, NEW, 'flux-instance.yaml'))[0].spec.path).toBe(`./${NEW}/flux-instance`);
    const listed = new Set(summary.leftovers.map((l) => `${l.file} ${l.field}`));
    const stray = newClusterFiles(repo).filter(
      ({ file, text }) =>
        /kubernetes\/clusters\/test|github\.com\/joryirving\/home-ops/.test(text) &&
        ![...listed].some((l) => l.startsWith(`${file} `)),
    );
    expect(stray.map((s) => s.file)).toEqual([]);
  });

  it('repoints the release where only the flux-instance Kustomization applies it (a kustomization.yaml of the folder leaving flux-instance/ out)', async () => {
    const repo = sharedApps();
    const listed = 'resources:\n  - apps.yaml\n  - cluster-info.yaml\n  - flux-instance.yaml\n';
    writeFileSync(join(repo, REFERENCE, 'kustomization.yaml'), listed);
    await generate(options(repo, repo, { sourceUrl: SOURCE_URL, sourceBranch: 'acme' }));
    const sync = yamlObjects(join(repo, NEW, RELEASE))[1].spec.values.instance.sync;
    expect([sync.path, sync.url, sync.ref]).toEqual([NEW, SOURCE_URL, 'refs/heads/acme']);
  });

  it("into a repository without origin: the leftover gate lists the chart's sync URL the new cluster would keep", async () => {
    const reference = sharedApps();
    const target = tempDir('jory-target');
    const { summary } = await generate(options(target, reference));
    // The namespaces' replacements file, loaded from outside their folders, comes along with the shared folders.
    expect(existsSync(join(target, 'kubernetes/components/replacements/ks.yaml'))).toBe(true);
    expect(summary.leftovers).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          file: `${REFERENCE}/${RELEASE}`,
          object: 'HelmRelease flux-system/flux-instance',
          field: 'spec.values.instance.sync.url',
          identifier: 'repository-url',
          matched: 'github.com/joryirving/home-ops',
        }),
      ]),
    );
  });

  it('refuses a chart release whose values come from valuesFrom, naming the file and the field', async () => {
    const repo = sharedApps();
    edit(repo, `${REFERENCE}/${RELEASE}`, (t) =>
      t.replace('  values:\n', '  valuesFrom:\n    - kind: ConfigMap\n      name: flux-instance-values\n  values:\n'),
    );
    await expect(generate(options(repo))).rejects.toThrow(
      `${REFERENCE}/${RELEASE}: HelmRelease flux-instance (the flux-instance chart, the cluster's Flux entry point) takes values from spec.valuesFrom`,
    );
  });

  it('refuses a sync path holding a ${VAR} nothing resolves before Helm renders the chart, naming the field', async () => {
    const repo = sharedApps();
    edit(repo, `${REFERENCE}/${RELEASE}`, (t) =>
      t.replace('path: kubernetes/clusters/test', 'path: kubernetes/clusters/${CLUSTER}'),
    );
    await expect(generate(options(repo))).rejects.toThrow(/spec\.values\.instance\.sync\.path holds a \$\{VAR\}/);
  });
});
