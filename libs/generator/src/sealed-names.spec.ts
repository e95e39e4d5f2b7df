import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Context } from './context';
import { renameSealedFiles } from './sealed-names';

/** onedr0p/home-ops' real .sops.yaml and kustomization (vendored, WTFPL): `kubernetes/.+\.secret(\.sops)?\.ya?ml`. */
const FIXTURE = join(__dirname, '../../../test/fixtures/public/onedr0p-home-ops-sops');
const DIR = 'kubernetes/acme/flux/vars';

function contextFor(rules: string | undefined, backend: 'sealed-secrets' | 'sops' = 'sealed-secrets') {
  const repoDir = mkdtempSync(join(tmpdir(), 'gs-sealed-names-'));
  if (rules) copyFileSync(rules, join(repoDir, '.sops.yaml'));
  const sealed = { file: `${DIR}/cluster-secrets.secret.sops.yaml`, namespace: 'flux-system', name: 'cluster-secrets' };
  return {
    opts: { repoDir, secretsBackend: backend },
    summary: {
      objects_sealed: [{ ...sealed, type: 'Opaque', keys: ['A'], scope: 'strict', reused: false }],
      warnings: [],
    },
  } as unknown as Context;
}

const folder = () =>
  new Map([
    ['kustomization.yaml', readFileSync(join(FIXTURE, 'kubernetes/main/flux/vars/kustomization.yaml'))],
    ['cluster-settings.yaml', Buffer.from('kind: ConfigMap\n')],
    ['cluster-secrets.secret.sops.yaml', Buffer.from('kind: SealedSecret\n')],
  ]);

describe('sealed file names and the repository SOPS rules', () => {
  it("renames a SealedSecret file the repository's rule matches, and the kustomization entry listing it", () => {
    const ctx = contextFor(join(FIXTURE, '.sops.yaml'));
    const files = folder();
    renameSealedFiles(ctx, DIR, files);
    expect([...files.keys()].sort()).toEqual([
      'cluster-secrets.sealedsecret.yaml',
      'cluster-settings.yaml',
      'kustomization.yaml',
    ]);
    expect(files.get('kustomization.yaml')!.toString()).toContain('  - ./cluster-secrets.sealedsecret.yaml\n');
    expect(files.get('kustomization.yaml')!.toString()).not.toContain('sops');
    expect(ctx.summary.objects_sealed[0].file).toBe(`${DIR}/cluster-secrets.sealedsecret.yaml`);
    // Every rule of the real file leaves the new name alone.
    expect(/kubernetes\/.+\.secret(\.sops)?\.ya?ml/.test(`${DIR}/cluster-secrets.sealedsecret.yaml`)).toBe(false);
  });

  it('leaves names alone without rules, with the sops backend, and warns when a rule matches every name', () => {
    for (const ctx of [contextFor(undefined), contextFor(join(FIXTURE, '.sops.yaml'), 'sops')]) {
      const files = folder();
      renameSealedFiles(ctx, DIR, files);
      expect(files.has('cluster-secrets.secret.sops.yaml')).toBe(true);
    }
    const dir = mkdtempSync(join(tmpdir(), 'gs-rules-'));
    writeFileSync(join(dir, 'r.yaml'), 'creation_rules:\n  - age: age1xyz\n');
    const ctx = contextFor(join(dir, 'r.yaml'));
    const files = folder();
    renameSealedFiles(ctx, DIR, files);
    expect(files.has('cluster-secrets.secret.sops.yaml')).toBe(true);
    expect(ctx.summary.warnings).toEqual([expect.stringMatching(/rule \(every path\) matches every name tried/)]);
  });
});
