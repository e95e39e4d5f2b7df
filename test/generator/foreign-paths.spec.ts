import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { generate, GenerateOptions, GeneratorInputError, planGeneration } from '#libs/generator';
import { makeRsaCert } from '../support/certs';
import { readTree, tempDir } from '../support/files';
import { exampleFirstPass, writeFluxExampleReference } from '../support/flux-example-repo';

/** A tenant's repository the staging cluster applies, and image automation pushing into another one. */
const TENANT = `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: team-a
  namespace: flux-system
spec:
  interval: 5m
  url: https://github.com/example/team-a
  ref:
    branch: main
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: team-a
  namespace: flux-system
spec:
  interval: 10m
  sourceRef:
    kind: GitRepository
    name: team-a
  path: ./staging
  prune: true
---
apiVersion: image.toolkit.fluxcd.io/v1beta2
kind: ImageUpdateAutomation
metadata:
  name: team-a
  namespace: flux-system
spec:
  interval: 30m
  sourceRef:
    kind: GitRepository
    name: team-a
  git:
    commit:
      author:
        email: fluxcd@example.com
        name: fluxcd
  update:
    path: ./deploy/staging
    strategy: Setters
`;

function tenantFleet() {
  const reference = tempDir('fp-reference');
  writeFluxExampleReference(reference);
  writeFileSync(join(reference, 'clusters/staging/tenants.yaml'), TENANT);
  const kustomization = join(reference, 'clusters/staging/kustomization.yaml');
  // The example's cluster folder has no kustomization of its own: Flux applies every file in it.
  try {
    writeFileSync(
      kustomization,
      readFileSync(kustomization, 'utf8').replace('resources:', 'resources:\n  - tenants.yaml'),
    );
  } catch {
    // no kustomization.yaml: the folder is generated as Flux does, tenants.yaml included
  }
  const repo = tempDir('fp-fleet');
  cpSync(reference, repo, { recursive: true });
  const options = (extra: Partial<GenerateOptions> = {}) => exampleFirstPass(repo, reference, extra);
  return { repo, options };
}

const objectsIn = (text: string) => parseAllDocuments(text).map((d) => d.toJS());

describe('paths into other repositories (--path-map)', () => {
  it('warns about each path in another repository that names the reference environment, naming file, object and field', async () => {
    const { options } = tenantFleet();
    const plan = await planGeneration(options());
    const warnings = plan.summary.warnings.filter((w) => w.includes('in another repository'));
    expect(warnings).toEqual([
      expect.stringContaining('clusters/acme/tenants.yaml: Kustomization flux-system/team-a spec.path is "./staging"'),
      expect.stringContaining(
        'clusters/acme/tenants.yaml: ImageUpdateAutomation flux-system/team-a spec.update.path is "./deploy/staging"',
      ),
    ]);
    expect(warnings[0]).toContain('--path-map ./staging=NEW');
    expect(plan.summary.paths_moved).toEqual([]);
  });

  it('moves mapped paths in the new cluster, keeps the reference byte for byte, and a second run writes nothing', async () => {
    const { repo, options } = tenantFleet();
    const before = readFileSync(join(repo, 'clusters/staging/tenants.yaml'), 'utf8');
    const pathMap = { './staging': './acme', 'deploy/staging/': './deploy/acme' };
    const infra = await generate(options({ pathMap }));
    const full = await generate(options({ pathMap, pass: 'full', sealingCertPem: makeRsaCert().certPem }));
    const tenants = objectsIn(readTree(repo)['clusters/acme/tenants.yaml']);
    expect(tenants.find((o) => o.kind === 'Kustomization').spec.path).toBe('./acme');
    expect(tenants.find((o) => o.kind === 'ImageUpdateAutomation').spec.update.path).toBe('./deploy/acme');
    expect(infra.summary.warnings.filter((w) => w.includes('in another repository'))).toEqual([]);
    expect(infra.summary.paths_moved.map((m) => [m.from, m.to])).toEqual([
      ['./staging', './acme'],
      ['./deploy/staging', './deploy/acme'],
    ]);
    expect(full.summary.warnings.filter((w) => w.includes('in another repository'))).toEqual([]);
    expect(readFileSync(join(repo, 'clusters/staging/tenants.yaml'), 'utf8')).toBe(before);
    const again = await generate(options({ pathMap, pass: 'full', sealingCertPem: makeRsaCert().certPem }));
    expect(again.summary.paths_written).toEqual([]);
  });

  it('refuses a mapping nothing uses, and values that are no repository path, before writing anything', async () => {
    const { repo, options } = tenantFleet();
    const cert = makeRsaCert().certPem;
    await expect(
      planGeneration(options({ pass: 'full', sealingCertPem: cert, pathMap: { './stagging': './acme' } })),
    ).rejects.toThrow(
      new GeneratorInputError(
        '--path-map ./stagging: no Flux Kustomization or ImageUpdateAutomation of the new cluster uses the path ./stagging in another repository',
      ),
    );
    for (const [to, problem] of [
      ['../acme', 'must not leave the repository (..)'],
      ['/acme', 'must be relative to the repository root (./path)'],
      ['./acme\nx', 'must not contain control characters'],
    ])
      await expect(generate(options({ pathMap: { './staging': to } }))).rejects.toThrow(`: ${problem}`);
    expect(Object.keys(readTree(repo)).filter((f) => f.startsWith('clusters/acme/'))).toEqual([]);
  });
});
