import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { GeneratorInputError, GeneratorValidationError } from './errors';
import type { FluxExampleReference } from './flux-example-reference';
import { buildFluxKustomization } from './flux-example-validate';
import { hostsIn } from './hosts';

/**
 * The hosts the reference cluster receives, as Flux builds them, from each Kustomization that takes objects with
 * hosts from a shared file: a placeholder in a shared base (`podinfo.example.com`) that the environment's overlay
 * replaces is not among them, so it needs no place in the new cluster. Undefined when no such Kustomization exists,
 * or when one cannot be built (then every host the files hold counts, as before).
 */
export async function hostsFluxApplies(ref: FluxExampleReference, kubectl?: string): Promise<Set<string> | undefined> {
  const withSharedHosts = ref.kustomizations.filter(
    (k) =>
      k.repoPath !== undefined &&
      k.sourceKind === 'GitRepository' &&
      k.objects.some((o) => o.shared && hostsIn(o.body, '').length > 0),
  );
  if (withSharedHosts.length === 0) return undefined;
  const hosts = new Set<string>();
  for (const k of withSharedHosts) {
    const scratch = mkdtempSync(join(tmpdir(), 'reference-build-'));
    try {
      const built = await buildFluxKustomization(
        k.declaration.body,
        join(ref.root, k.repoPath!),
        `reference Kustomization ${k.name}`,
        { scratch, roots: [scratch, ref.root], kubectl, shown: (file) => relative(ref.root, file) },
      );
      for (const object of built) for (const found of hostsIn(object.body, '')) hosts.add(found.host);
    } catch (e) {
      if (e instanceof GeneratorValidationError || e instanceof GeneratorInputError) return undefined;
      throw e;
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
  return hosts;
}
