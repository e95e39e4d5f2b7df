/** The cluster-vars model's staged folder built as Flux builds it, and checked. */
import { shownName, shownPath } from './shown-values';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, normalize, relative } from 'node:path';
import { stringify } from 'yaml';
import { substitutionOf } from './cluster-vars-reference';
import { GeneratorValidationError } from './errors';
import {
  buildFluxInstanceSync,
  fluxInstanceSyncPath,
  makesFluxInstance,
  markFluxInstanceReleases,
} from './flux-instance';
import { isFluxKustomization, normalizePath } from './flux-sync';
import { leftoverReferenceValues, warnOnce } from './shared-values';
import {
  asFluxBuildsIt,
  buildKustomizationGraph,
  BuiltObject,
  checkBuilt,
  checkDependencies,
  FluxBuild,
  kustomizeBuild,
  substituteBuilt,
} from './validate';
import { VarsContext, substitutes, variablesFor, clusterPath } from './cluster-vars-context';

/**
 * The staged cluster folder built as Flux would: the folder itself, then every Kustomization it
 * applies, with the new cluster's variables substituted, checked for plaintext Secrets, hosts
 * outside the domain, undefined variables and dependencies this pass does not provide.
 */
export async function validateStaged(ctx: VarsContext, staging: string): Promise<void> {
  if (!ctx.summary.validated) return;
  const { objects: root, path: entry, entrySyncs } = await buildEntryFolder(ctx, staging);
  checkBuilt(ctx.summary, root, entry, ctx.opts.domain);
  warnOnce(ctx.summary.warnings, leftoverReferenceValues(root, ctx.referenceValues, entry));
  const syncs = root.map((o) => o.body).filter(isFluxKustomization);
  const { kustomizations, checked } = await buildKustomizationGraph(syncs, (b) => buildSync(ctx, staging, b));
  const names = new Set(kustomizations.map((b) => String(b.metadata?.name)));
  // The pass applies exactly the Kustomizations it should, nested ones included: none missing, none that waits for secrets.
  const missingSync = [...ctx.applied].find((name) => !names.has(name));
  if (missingSync)
    throw new GeneratorValidationError(
      `${ctx.clusterDir}: this ${ctx.opts.pass} pass should apply Kustomization ${missingSync}, but neither the cluster folder nor a folder it applies builds it`,
    );
  const early = [...names].find((name) => !ctx.applied.has(name) && !entrySyncs.has(name));
  if (early)
    throw new GeneratorValidationError(
      `${ctx.clusterDir}: Kustomization ${early} waits for the cluster's secrets but the ${ctx.opts.pass} pass applies it`,
    );
  checkDependencies(kustomizations, ctx.clusterDir);
  ctx.summary.validated.push(entry, ...checked.filter((p): p is string => p !== undefined));
}

/** Where a path of the new cluster is while the pass is checked: in the staging folder when it is the cluster's, else in the repository. */
function stagedPath(ctx: VarsContext, staging: string, path: string): string {
  if (path === ctx.clusterDir) return staging;
  return path.startsWith(ctx.clusterDir + '/')
    ? join(staging, path.slice(ctx.clusterDir.length + 1))
    : join(ctx.opts.repoDir, path);
}

/**
 * The staged entry folder (the cluster folder, or home-ops' flux/ inside it) as the cluster's own sync
 * applies it: built as it is, or with the kustomization Flux generates where it has none; plus, for
 * Flux Operator, the source and Kustomization the FluxInstance makes the operator create, with its
 * patches; the folder is substituted when that Kustomization substitutes variables. `entrySyncs`
 * names the operator's sync Kustomization.
 */
async function buildEntryFolder(
  ctx: VarsContext,
  staging: string,
): Promise<{ objects: BuiltObject[]; path: string; entrySyncs: Set<string> }> {
  const path = clusterPath(ctx, ctx.ref.entryDir);
  const folder = await buildAsFlux(ctx, stagedPath(ctx, staging, path), path);
  if (!ctx.ref.fluxInstance) return { objects: folder, path, entrySyncs: new Set() };
  markFluxInstanceReleases(folder.map((o) => ({ body: o.body, file: o.file ?? path })));
  const instance = folder.find((o) => makesFluxInstance(o.body) && fluxInstanceSyncPath(o.body) === path);
  if (!instance)
    throw new GeneratorValidationError(
      `${path}: no FluxInstance (or flux-instance chart release) in the cluster folder syncs ./${path}, so Flux Operator would never apply it`,
    );
  const sync = await buildFluxInstanceSync(instance.body, `${instance.file ?? path} (its spec.sync)`, {
    roots: [ctx.opts.repoDir],
    kubectl: ctx.opts.kubectl,
  });
  const entryKustomization = sync.find((o) => isFluxKustomization(o.body))!.body;
  // A reference may patch postBuild into the sync Kustomization: the folder is then substituted, as Flux would.
  const substitution = substitutionOf(entryKustomization);
  const vars = substitutes(substitution) ? variablesFor(ctx, substitution) : undefined;
  const applied = vars ? folder.map((o) => substituteBuilt(o, vars, path)) : folder;
  return { objects: [...applied, ...sync], path, entrySyncs: new Set([String(entryKustomization.metadata?.name)]) };
}

/**
 * kustomize's build of a Flux Kustomization's folder, with the kustomization Flux generates when it
 * has none, and the Kustomization's inline `spec.patches` applied as kustomize-controller applies them.
 */
async function buildAsFlux(ctx: VarsContext, abs: string, path: string, patches?: unknown[]): Promise<BuiltObject[]> {
  const scratch = mkdtempSync(join(tmpdir(), 'flux-generated-'));
  try {
    const roots = [ctx.opts.repoDir, scratch];
    const shown = (file: string) => normalize(join(path, relative(abs, file)));
    const flux = asFluxBuildsIt(abs, join(scratch, 'generated'), roots, shown);
    let dir = flux.dir;
    if (patches && patches.length > 0) {
      dir = join(scratch, 'patched');
      mkdirSync(dir);
      writeFileSync(join(dir, 'kustomization.yaml'), stringify({ resources: [relative(dir, flux.dir)], patches }));
    }
    return await kustomizeBuild(dir, path, { roots, kubectl: ctx.opts.kubectl, shown: flux.shown });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Builds what one Flux Kustomization of the new cluster applies, substituted; returns the path checked. */
async function buildSync(ctx: VarsContext, staging: string, body: any): Promise<FluxBuild<string | undefined>> {
  const path = normalizePath(String(body.spec?.path ?? ''));
  const k = ctx.ref.kustomizations.find((k) => k.name === body.metadata?.name);
  // The cluster's entry folder (its own sync applies it) is built above; another source's path is not here to build.
  if (path === clusterPath(ctx, ctx.ref.entryDir) || k?.otherSource) return { checked: undefined, objects: [] };
  const abs = stagedPath(ctx, staging, path);
  if (!existsSync(abs))
    throw new GeneratorValidationError(
      `Kustomization ${shownName(body.metadata?.name)}: path ${shownPath(`./${path}`)} does not exist in the repository`,
    );
  const objects = await buildAsFlux(ctx, abs, path, body.spec?.patches);
  // Substituted as Flux will; a source outside the repository leaves the values unknown, so unchecked.
  const vars = k && substitutes(k) ? variablesFor(ctx, k) : undefined;
  const applied = vars ? objects.map((o) => substituteBuilt(o, vars, path)) : objects;
  checkBuilt(ctx.summary, applied, path, ctx.opts.domain);
  // The shared platform is every cluster's: a literal reference value in it has no per-cluster place to move to.
  warnOnce(ctx.summary.warnings, leftoverReferenceValues(applied, ctx.referenceValues, path));
  return { checked: path, objects: applied };
}
