/**
 * Validation for the flux-example model: every Kustomization the new cluster applies is built as
 * Flux would build it, from the staged folders, and what it builds is checked.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { isSeq, stringify } from 'yaml';
import { GeneratedArtifact, generatedArtifacts, isArtifactGenerator, materialise } from './artifacts';
import { GeneratorValidationError } from './errors';
import { filledByCluster } from './filled-secrets';
import { inlineVariables } from './flux-example-reference';
import { fluxInstanceSyncObjects, fluxInstanceSyncPath, isFluxInstance } from './flux-instance';
import { isFluxKustomization, normalizePath } from './flux-sync';
import { HostMapping, hostsIn } from './hosts';
import { shownKind, shownName } from './shown-values';
import { listFiles } from './reference';
import { leftoverReferenceValues, ReferenceValues, warnOnce } from './shared-values';
import {
  asFluxBuildsIt,
  BuiltObject,
  buildKustomizationGraph,
  checkDependencies,
  FluxBuild,
  checkAgainstSchemas,
  checkNotPlaintextSecret,
  kustomizeBuild,
  substituteBuilt,
} from './validate';
import { isYamlFile, readBodies } from './yaml-docs';
import type { Context } from './context';
import { readRepoFile } from './repo-files';

/** What validation needs of a pass. */
export interface ExampleValidation {
  ctx: Context;
  hosts: HostMapping;
  /** Names of the Kustomizations this pass applies. */
  applied: Set<string>;
  /** Names of the Kustomizations whose source is another repository: there is nothing here to build. */
  inOtherRepositories: Set<string>;
  /** Every host of the reference environment. */
  referenceHosts: Set<string>;
  /** What names the reference cluster: whatever of it is left in what the cluster applies is a warning. */
  referenceValues: ReferenceValues;
}

/**
 * Builds every Kustomization the new cluster applies in this pass as Flux would (the artifact
 * reproduced for ExternalArtifact sources, inline patches applied) and checks the result: no
 * plaintext Secret, every host the new cluster's, no dependency this pass does not apply.
 */
export async function validateStaged(v: ExampleValidation, staged: Map<string, string>): Promise<void> {
  const { ctx } = v;
  if (!ctx.summary.validated) return;
  const resolve = (repoPath: string) => {
    for (const [dir, abs] of staged)
      if (repoPath === dir || repoPath.startsWith(dir + '/')) return join(abs, repoPath.slice(dir.length));
    return join(ctx.opts.repoDir, repoPath);
  };
  const clusterStaging = staged.get(ctx.clusterDir)!;
  const declaredObjects = listFiles(clusterStaging)
    .filter(isYamlFile)
    .flatMap((rel) => {
      const file = `${ctx.clusterDir}/${rel}`;
      // A copy: the kept values are frozen, and the schema check looks at objects through proxies, which a frozen object refuses.
      return readBodies(readRepoFile(clusterStaging, rel, 'utf8'), file).map((body) => ({
        body: structuredClone(body),
        file,
      }));
    });
  // The cluster folder's own objects (its Kustomizations and sources) are applied too, by the bootstrap Kustomization.
  checkAgainstSchemas(ctx.summary, declaredObjects, ctx.clusterDir);
  const declared = declaredObjects.map((o) => o.body);
  const syncs = withEntrySync(declared, ctx.clusterDir);
  const artifacts = new Map<string, GeneratedArtifact>(
    declared
      .filter(isArtifactGenerator)
      .flatMap((g) => generatedArtifacts(g, ctx.clusterDir).map((a) => [a.name, a] as const)),
  );
  // A file's name in messages: its repository path (a staged folder's as the folder it stands for).
  const shown = (file: string) => {
    for (const [dir, abs] of staged) if (file.startsWith(abs + '/')) return join(dir, relative(abs, file));
    return relative(ctx.opts.repoDir, file);
  };
  const { kustomizations, checked } = await buildKustomizationGraph(syncs, (b) =>
    buildKustomization(v, b, resolve, artifacts, shown),
  );
  const names = new Set(kustomizations.map((b) => String(b.metadata?.name)));
  const missingSync = [...v.applied].find((name) => !names.has(name));
  if (missingSync)
    throw new GeneratorValidationError(
      `${ctx.clusterDir}: this ${ctx.opts.pass} pass should apply Kustomization ${missingSync}, but neither the cluster folder nor a folder it applies declares it`,
    );
  checkDependencies(kustomizations, ctx.clusterDir);
  ctx.summary.validated.push(...checked.filter((r): r is string => r !== undefined));
}

/**
 * The cluster's Kustomizations with the one over the cluster folder itself, the entry Flux starts
 * from: the reference's, or, when the cluster folder declares none (Flux's example ships
 * flux-system/gotk-sync.yaml as a placeholder), the one `flux bootstrap --path <cluster folder>`
 * will write, or the one Flux Operator creates for a FluxInstance that syncs the folder. Either way
 * the entry folder, flux-system/ included, is built before anything is written: Flux applies
 * nothing of the cluster if it does not build.
 */
function withEntrySync(declared: any[], clusterDir: string): any[] {
  const syncs = declared.filter(isFluxKustomization);
  const entry = syncs.some(
    (b) =>
      String(b.spec?.sourceRef?.kind ?? 'GitRepository') === 'GitRepository' &&
      normalizePath(String(b.spec?.path ?? '.')) === clusterDir,
  );
  if (entry) return syncs;
  const bootstrap = {
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name: 'flux-system', namespace: 'flux-system' },
    spec: { path: `./${clusterDir}`, sourceRef: { kind: 'GitRepository', name: 'flux-system' } },
  };
  const instance = declared.find((b) => isFluxInstance(b) && fluxInstanceSyncPath(b) === clusterDir);
  return [...syncs, fluxInstanceSyncObjects(instance).find(isFluxKustomization) ?? bootstrap];
}

/** Builds what one Flux Kustomization of the new cluster applies; returns what was checked. */
async function buildKustomization(
  v: ExampleValidation,
  body: any,
  resolve: (p: string) => string,
  artifacts: Map<string, GeneratedArtifact>,
  shown: (absFile: string) => string,
): Promise<FluxBuild<string | undefined>> {
  const name = String(body.metadata?.name);
  const path = normalizePath(String(body.spec?.path ?? '.'));
  const kind = String(body.spec?.sourceRef?.kind ?? 'GitRepository');
  if (v.inOtherRepositories.has(name)) return { checked: undefined, objects: [] };
  const scratch = mkdtempSync(join(tmpdir(), 'flux-build-'));
  try {
    let dir: string;
    let label: string;
    if (kind === 'ExternalArtifact') {
      const artifact = artifacts.get(String(body.spec.sourceRef.name));
      if (!artifact)
        throw new GeneratorValidationError(
          `Kustomization ${shownName(name)}: ExternalArtifact ${shownName(body.spec.sourceRef.name)} is not generated by the cluster's ArtifactGenerator`,
        );
      materialise(artifact, resolve, join(scratch, 'artifact'));
      dir = join(scratch, 'artifact', path);
      label = `${artifact.name}:./${path}`;
    } else if (kind === 'GitRepository') {
      dir = resolve(path);
      label = `./${path}`;
    } else return { checked: undefined, objects: [] };
    if (!existsSync(dir)) throw new GeneratorValidationError(`Kustomization ${name}: path ${label} does not exist`);
    const where = `Kustomization ${name} (${label})`;
    const applied = await buildFluxKustomization(body, dir, where, {
      scratch,
      roots: [scratch, v.ctx.opts.repoDir],
      kubectl: v.ctx.opts.kubectl,
      shown: (file) => (file.startsWith(scratch + '/') ? `${label}: ${relative(scratch, file)}` : shown(file)),
    });
    for (const object of applied) checkBuilt(v, object.body, where);
    warnOnce(v.ctx.summary.warnings, leftoverReferenceValues(applied, v.referenceValues, where));
    checkAgainstSchemas(v.ctx.summary, applied, where);
    return { checked: label, objects: applied };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * What a Flux Kustomization applies from `dir`, built as kustomize-controller builds it: the kustomization
 * Flux generates where the folder has none, the Kustomization's inline `spec.patches`, its inline variables
 * substituted. `scratch` is the caller's (it removes it).
 */
export async function buildFluxKustomization(
  body: any,
  dir: string,
  where: string,
  opts: { scratch: string; roots: string[]; kubectl?: string; shown: (absFile: string) => string },
): Promise<BuiltObject[]> {
  const flux = asFluxBuildsIt(dir, join(opts.scratch, 'generated'), opts.roots, opts.shown);
  const build = join(opts.scratch, 'build');
  writeFileAt(build, {
    resources: [relative(build, flux.dir)],
    ...(body.spec?.patches ? { patches: body.spec.patches } : {}),
  });
  const vars = inlineVariables(body);
  const built = await kustomizeBuild(build, where, {
    roots: opts.roots,
    kubectl: opts.kubectl,
    shown: flux.shown,
  });
  return built.map((object) => (vars ? substituteBuilt(object, vars, where) : object));
}

function writeFileAt(dir: string, kustomization: object) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'kustomization.yaml'), stringify(kustomization));
}

/** What one built object may not be: a plaintext Secret, or carrying a host that is not the new cluster's. */
function checkBuilt(v: ExampleValidation, object: any, label: string) {
  if (!object || isSeq(object)) return;
  checkNotPlaintextSecret(object, label);
  // A host with a variable from a source the generator cannot see is Flux's to fill in.
  for (const found of hostsIn(object, `${shownKind(object.kind)} ${shownName(object.metadata?.name)}`).filter(
    (h) => !h.host.includes('${'),
  )) {
    if (
      !v.hosts.isNewClusterHost(found.host) ||
      (v.referenceHosts.has(found.host) && v.hosts.target(found.host) !== found.host)
    ) {
      throw new GeneratorValidationError(`${label} builds ${found.where} with a host that is not the new cluster's`);
    }
  }
  if (v.ctx.opts.pass === 'infra' && object.kind === 'Secret' && !filledByCluster(object))
    throw new GeneratorValidationError(`${label}: the infra pass applies Secret ${shownName(object.metadata?.name)}`);
}
