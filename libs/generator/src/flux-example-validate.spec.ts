import { join } from 'node:path';
import { tempDir, writeTree } from '../../../test/support/files';
import {
  UPSTREAM_BOOTSTRAP_PLACEHOLDER,
  UPSTREAM_FLUX_SYSTEM_KUSTOMIZATION,
} from '../../../test/support/flux-example-repo';
import type { Context } from './context';
import { GeneratorValidationError } from './errors';
import { validateStaged } from './flux-example-validate';
import { HostMapping } from './hosts';

const CLUSTER = 'clusters/acme';

/**
 * Stages `files` as the new cluster's folder (where the generator stages it, beside its place) and
 * validates it; returns the folders validation built.
 */
async function validate(files: Record<string, string>): Promise<string[]> {
  const repo = tempDir('fx-validate');
  const staging = 'clusters/.acme.staging-test';
  writeTree(repo, Object.fromEntries(Object.entries(files).map(([rel, text]) => [`${staging}/${rel}`, text])));
  const summary = { validated: [] as string[], schema_checked: null, warnings: [] as string[] };
  const ctx = { opts: { repoDir: repo, clusterName: 'acme', pass: 'infra' }, clusterDir: CLUSTER, summary };
  await validateStaged(
    {
      ctx: ctx as unknown as Context,
      hosts: new HostMapping('acme.io', undefined, {}),
      applied: new Set(),
      inOtherRepositories: new Set(),
      referenceHosts: new Set(),
      referenceValues: { acmeEmails: [], newDomain: 'acme.io' },
    },
    new Map([[CLUSTER, join(repo, staging)]]),
  );
  return summary.validated;
}

const sync = `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 10m
  path: ./${CLUSTER}
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
`;

describe('flux-example validation of the entry folder', () => {
  it('fails when the cluster folder does not build, even though no Kustomization of it declares the folder', async () => {
    // The plan the generator made before placeholders were carried over: the kustomization lists a file it dropped.
    const failure = await validate({
      'flux-system/kustomization.yaml': UPSTREAM_FLUX_SYSTEM_KUSTOMIZATION,
      'flux-system/gotk-sync.yaml': UPSTREAM_BOOTSTRAP_PLACEHOLDER,
    }).catch((e) => e);
    expect(failure).toBeInstanceOf(GeneratorValidationError);
    expect(failure.message).toMatch(
      /^kustomize build of Kustomization flux-system \(\.\/clusters\/acme\) failed: .*gotk-components\.yaml/,
    );
  });

  it('builds the entry folder as the Kustomization flux bootstrap writes when none is declared', async () => {
    expect(
      await validate({
        'flux-system/kustomization.yaml': UPSTREAM_FLUX_SYSTEM_KUSTOMIZATION,
        'flux-system/gotk-components.yaml': UPSTREAM_BOOTSTRAP_PLACEHOLDER,
        'flux-system/gotk-sync.yaml': UPSTREAM_BOOTSTRAP_PLACEHOLDER,
      }),
    ).toEqual([`./${CLUSTER}`]);
  });

  it('builds it once, with the declared Kustomization, when the cluster folder has one', async () => {
    expect(
      await validate({
        'flux-system/kustomization.yaml': UPSTREAM_FLUX_SYSTEM_KUSTOMIZATION,
        'flux-system/gotk-components.yaml': UPSTREAM_BOOTSTRAP_PLACEHOLDER,
        'flux-system/gotk-sync.yaml': sync,
      }),
    ).toEqual([`./${CLUSTER}`]);
  });
});
