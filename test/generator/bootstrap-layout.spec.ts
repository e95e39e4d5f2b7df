import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate, GenerateOptions, SHIPPED_TEMPLATE } from '#libs/generator';
import { makeRsaCert } from '../support/certs';
import { kustomize, tempDir, yamlObjects } from '../support/files';

/**
 * A reference laid out as `flux bootstrap` leaves it: the flux-system Kustomization syncs the cluster
 * root (./clusters/<env>), whose own kustomization.yaml lists only flux-system; the layers come from
 * the Kustomizations in gotk-sync.yaml. The new cluster must keep both, repointed, or Flux would
 * generate a kustomization over the whole folder and apply every layer at once.
 */
describe('generator on a reference in the flux bootstrap layout', () => {
  const cert = makeRsaCert();
  const template = tempDir('bootstrap-template');
  cpSync(SHIPPED_TEMPLATE, template, { recursive: true });
  const sync = join(template, 'clusters/development/flux-system/gotk-sync.yaml');
  writeFileSync(
    sync,
    readFileSync(sync, 'utf8').replace('path: ./clusters/development/flux-system', 'path: ./clusters/development'),
  );
  writeFileSync(
    join(template, 'clusters/development/kustomization.yaml'),
    'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - flux-system\n',
  );
  const options = (repoDir: string, extra: Partial<GenerateOptions>): GenerateOptions => ({
    repoDir,
    templateDir: template,
    clusterName: 'boot',
    domain: 'boot.example.com',
    region: 'eu-west-1',
    acmeEmail: 'ops@boot.example.com',
    pass: 'infra',
    // Both passes: the infra pass rehearses the full pass, whose pull secret needs them.
    registry: { server: 'r.example.com', username: 'u', password: 'RegistryPassword-1' },
    ...extra,
  });

  it('keeps the root kustomization and the Kustomization over the cluster root, repointed, in both passes', async () => {
    const repo = tempDir('bootstrap-out');
    for (const extra of [{}, { pass: 'full' as const, sealingCertPem: cert.certPem }]) {
      const { summary } = await generate(options(repo, extra));
      expect(yamlObjects(join(repo, 'clusters/boot/kustomization.yaml'))[0].resources).toEqual(['flux-system']);
      const root = yamlObjects(join(repo, 'clusters/boot/flux-system/gotk-sync.yaml')).find(
        (o) => o.kind === 'Kustomization' && o.metadata.name === 'flux-system',
      );
      expect(root.spec.path).toBe('./clusters/boot');
      expect(summary.kustomizations).toContainEqual({ name: 'flux-system', path: './clusters/boot', dependsOn: [] });
      expect(summary.validated).toContain('clusters/boot');
      // What the bootstrap Kustomization applies from the root: the sync objects, not the layers themselves.
      const applied = kustomize(join(repo, 'clusters/boot'));
      expect([...new Set(applied.map((o) => o.kind))].sort()).toEqual(['GitRepository', 'Kustomization']);
      const layers = applied
        .filter((o) => o.kind === 'Kustomization' && o.metadata.name !== 'flux-system')
        .map((o) => o.spec.path);
      expect(layers.every((p: string) => p.startsWith('./clusters/boot/'))).toBe(true);
      expect(layers).toContain('./clusters/boot/infrastructure');
      expect(layers.includes('./clusters/boot/database')).toBe(extra.pass === 'full');
    }
  });
});
