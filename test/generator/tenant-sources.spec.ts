/**
 * Kustomizations over other sources, on fluxcd/flux2-multi-tenancy as published (vendored, Apache-2.0): the tenant
 * `dev-team` applies another branch of the same repository, with no path in its base (the source's root) and
 * `./staging` in the staging cluster's patch. Flux reads those paths in that branch, so the generator neither reads
 * nor builds them here, and the cluster's patch keeps naming the tenant's folder until --path-map moves it.
 * Before: the tenant's `./.` was built against this repository (exit 1, kustomize's own error), and the
 * patch's `./staging` was silently replaced by `./.`, the whole tenant branch.
 */
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { generate, GenerateOptions } from '#libs/generator';
import { makeRsaCert } from '../support/certs';
import { tempDir, yamlObjects } from '../support/files';

const FIXTURE = join(__dirname, '../fixtures/public/fluxcd-flux2-multi-tenancy');

describe('Kustomizations over other sources (fluxcd/flux2-multi-tenancy as published)', () => {
  const { certPem } = makeRsaCert();
  const options = (repo: string, extra: Partial<GenerateOptions> = {}): GenerateOptions => ({
    repoDir: repo,
    templateDir: repo,
    referenceEnv: 'staging',
    clusterName: 'acme',
    domain: 'acme.example.com',
    region: 'eu-west-1',
    acmeEmail: 'ops@acme.example.com',
    pass: 'infra',
    ...extra,
  });
  const fleet = () => {
    const repo = tempDir('multi-tenancy');
    cpSync(FIXTURE, repo, { recursive: true });
    return repo;
  };
  const bothPasses = async (repo: string, extra: Partial<GenerateOptions> = {}) => {
    await generate(options(repo, extra));
    return (await generate(options(repo, { ...extra, pass: 'full', sealingCertPem: certPem }))).summary;
  };
  const tenantPatch = (repo: string) => yamlObjects(join(repo, 'tenants/acme/dev-team-patch.yaml'))[0];

  it("scaffolds both passes without reading the tenant's branch, and says what it did not inspect", async () => {
    const repo = fleet();
    const full = await bothPasses(repo);
    expect(full.kustomizations.map((k) => k.name).sort()).toEqual([
      'dev-team',
      'kyverno',
      'kyverno-policies',
      'tenants',
    ]);
    expect(full.validated).not.toEqual(expect.arrayContaining([expect.stringMatching(/dev-team/)]));
    expect(full.warnings).toEqual(
      expect.arrayContaining([
        'tenants/base/dev-team/sync.yaml Kustomization dev-team: source GitRepository dev-team is another repository or revision; it is not inspected',
      ]),
    );
    // The staging cluster's patch still names the tenant's staging folder: listed with the flag that moves it.
    expect(tenantPatch(repo).spec.path).toBe('./staging');
    expect(full.warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^tenants\/acme\/dev-team-patch\.yaml: Kustomization apps\/dev-team spec\.path is "\.\/staging" in another repository, which names the reference environment "staging".*--path-map \.\/staging=NEW/,
        ),
      ]),
    );
  });

  it("moves the tenant's folder by --path-map, and the reference cluster's files stay as they were", async () => {
    const repo = fleet();
    const full = await bothPasses(repo, { pathMap: { './staging': './acme' } });
    expect(tenantPatch(repo).spec.path).toBe('./acme');
    expect(full.paths_moved).toEqual([
      expect.objectContaining({ from: './staging', to: './acme', where: expect.stringMatching(/^tenants\/acme\//) }),
    ]);
    expect(yamlObjects(join(repo, 'tenants/staging/dev-team-patch.yaml'))[0].spec.path).toBe('./staging');
  });
});
