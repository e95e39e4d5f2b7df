/**
 * Reading a reference that uses the cluster-vars environment model: the environment folder
 * (clusters/<env>/, or any folder such as kubernetes/<cluster>/ in the home-ops layout) holds the
 * bootstrap, a cluster-vars ConfigMap and the cluster's own secrets, and pulls in a shared base
 * of Flux Kustomizations that substitute cluster-vars (`postBuild.substituteFrom`) into shared
 * platform folders. Environments differ only by cluster-vars and their secrets.
 */
import { shownPath } from './shown-values';
import { readdirSync } from 'node:fs';
import { join, posix } from 'node:path';
import { environmentName, referenceEnvDir } from './environment-folder';
import { GeneratorInputError } from './errors';
import { holdsCredentials } from './filled-secrets';
import { fluxInstanceSyncPath, makesFluxInstance, markFluxInstanceReleases } from './flux-instance';
import { withParentPatches } from './flux-inline-patches';
import { isFluxKustomization, normalizePath } from './flux-sync';
import { describeSource, readsThisRepository, ReferenceSources, referenceSources, sourceRefOf } from './flux-sources';
import { guardReferenceSecrets } from './protect';
import { collectTree, findKustomizationFile, listFiles, readYamlObject, ReferenceObject } from './reference';
import { readBodies } from './yaml-docs';
import { substitute, substitutionDisabled } from './substitution';
import { isRepoFolder, readRepoFile } from './repo-files';

export interface SubstitutionSource {
  kind: string;
  name: string;
  optional: boolean;
}

/** One Flux Kustomization the reference cluster runs. */
export interface VarsKustomization {
  name: string;
  /** The object declaring it (in the environment folder or in the shared base). */
  declaration: ReferenceObject;
  /** Repository-relative folder it applies, without ./ */
  path: string;
  dependsOn: string[];
  substituteFrom: SubstitutionSource[];
  /** postBuild.substitute: inline values. */
  substitute: Record<string, string>;
  /** What its folder builds from. */
  objects: ReferenceObject[];
  sharedDirs: string[];
  holdsSecrets: boolean;
  /** It holds secrets or depends (transitively) on a Kustomization that does: it waits for the full pass. */
  fullPass: boolean;
  /** Flux Kustomizations its folder applies (nested ones). */
  applies?: string[];
  /** The cluster's own sync (its path is the entry folder): it goes out first, whatever it holds. */
  entry?: boolean;
  /** Its source is not this repository (flux-sources.ts): carried as it is, not read, not built. */
  otherSource?: boolean;
}

export interface VarsConfigMap {
  object: ReferenceObject;
  data: Record<string, string>;
}

export interface ClusterVarsReference {
  root: string;
  envName: string;
  /** clusters/<env>, or the environment's folder anywhere in the repository (kubernetes/main) */
  envDir: string;
  /** Every file of the environment folder, relative to it. */
  envFiles: string[];
  /** The folder the cluster's own sync applies: the environment folder, or one inside it (kubernetes/main/flux). */
  entryDir: string;
  /** The entry folder's kustomization file; undefined when Flux generates it (home-ops' flux/ folder). */
  rootKustomizationFile: string | undefined;
  /** The objects the entry folder builds (what the cluster's own sync applies). */
  /** Flux Operator's entry point: the FluxInstance whose spec.sync applies the entry folder. */
  fluxInstance?: ReferenceObject;
  /** The objects the entry folder builds (what the cluster's own sync applies). */
  applied: ReferenceObject[];
  /**
   * SOPS-encrypted Secrets the cluster's own sync applies (home-ops' cluster-secrets, substituted into
   * every Kustomization): Flux decrypts them with nothing running first, so they go out in the first pass.
   */
  entrySecrets: ReferenceObject[];
  vars: VarsConfigMap;
  kustomizations: VarsKustomization[];
  /** Every folder outside the environment the tree needs (the shared base and platform). */
  sharedDirs: string[];
  warnings: string[];
}

/** The sources a Flux Kustomization substitutes variables from (postBuild.substituteFrom). */
function substitutionSources(body: any): SubstitutionSource[] {
  return (body.spec?.postBuild?.substituteFrom ?? []).map((s: any) => ({
    kind: String(s?.kind),
    name: String(s?.name),
    optional: s?.optional === true,
  }));
}

/** What a Flux Kustomization substitutes after its build: the sources it reads and its inline values. */
export function substitutionOf(body: any): {
  substituteFrom: SubstitutionSource[];
  substitute: Record<string, string>;
} {
  return {
    substituteFrom: substitutionSources(body),
    substitute: Object.fromEntries(
      Object.entries(body.spec?.postBuild?.substitute ?? {}).map(([k, v]) => [k, String(v)]),
    ),
  };
}

/**
 * The reference environment in the cluster-vars model, or undefined when the environment does
 * not use it (no kustomization at its root, or no Flux Kustomization substituting a ConfigMap the
 * environment defines).
 */
export function loadClusterVarsReference(root: string, referenceEnv: string): ClusterVarsReference | undefined {
  const envDir = referenceEnvDir(root, referenceEnv);
  const absEnv = join(root, envDir);
  if (!isRepoFolder(root, envDir)) return undefined;
  // The cluster's own sync applies the folder (a flux-system Kustomization, a FluxInstance or the flux-instance chart) or one inside it.
  const entryDir = findKustomizationFile(absEnv) ? envDir : selfSyncedFolder(root, envDir);
  if (!entryDir) {
    refuseGeneratedRoot(root, envDir, () => 'holds no sync of its own (a Kustomization or FluxInstance over it)');
    return undefined;
  }
  const rootKustomizationFile = findKustomizationFile(join(root, entryDir));
  const warnings: string[] = [];
  const applied = collectTree(root, envDir, entryDir, warnings, { fluxApplied: true });
  markFluxInstanceReleases(applied.objects);
  const declarations = applied.objects.filter((o) => isFluxKustomization(o.body));
  const varsObject = applied.objects.find(
    (o) =>
      o.kind === 'ConfigMap' &&
      !o.shared &&
      declarations.some((k) => substitutionSources(k.body).some((s) => s.kind === 'ConfigMap' && s.name === o.name)),
  );
  if (!varsObject) {
    // Flux's generated kustomization may leave out what substitutes the settings (a `../base` only a written one lists).
    if (!rootKustomizationFile)
      refuseGeneratedRoot(
        root,
        envDir,
        (file) => `the one Flux generates from every file of the folder does not apply ${file}`,
      );
    return undefined;
  }

  const sources = referenceSources(root);
  const varsData = { name: varsObject.name, data: stringData(varsObject.body.data) };
  const read = (d: ReferenceObject) => readKustomization(root, envDir, entryDir, d, warnings, sources, varsData);
  const kustomizations = followNested(declarations.map(read), read);
  markFullPass(kustomizations);
  // A chart release only a Kustomization of the cluster applies (flux-instance.yaml's folder) is repointed all the same.
  for (const k of kustomizations) markFluxInstanceReleases(k.objects);
  const vars: VarsConfigMap = { object: varsObject, data: varsData.data };
  // A single-cluster folder (kubernetes/) has no name of its own: its settings' CLUSTER_NAME is it.
  const envName = environmentName(envDir) ?? vars.data.CLUSTER_NAME ?? envDir;
  refusePerClusterFolders(root, envDir, envName, kustomizations);
  const reference: ClusterVarsReference = {
    root,
    envName,
    envDir,
    envFiles: listFiles(absEnv),
    entryDir,
    rootKustomizationFile,
    fluxInstance: applied.objects.find((o) => makesFluxInstance(o.body) && fluxInstanceSyncPath(o.body) === entryDir),
    applied: applied.objects,
    entrySecrets: applied.objects.filter((o) => o.kind === 'Secret' && isSopsEncrypted(o.body)),
    vars,
    kustomizations,
    sharedDirs: sharedFolders(envDir, [...applied.sharedDirs, ...kustomizations.flatMap((k) => k.sharedDirs)]),
    warnings,
  };
  guardSecrets(reference);
  return reference;
}

/**
 * Folders outside the environment folder that a Kustomization of the reference cluster applies and
 * that are that cluster's, not shared: the path names the cluster, and another cluster of the
 * repository (a folder beside the environment's) has its own folder there (joryirving/home-ops'
 * `kubernetes/apps/test` beside `kubernetes/apps/main`, for `kubernetes/clusters/{test,main}`).
 * This model copies only the environment folder and carries every folder outside it as every
 * cluster's, so the new cluster would run the reference's apps: refused, all named at once. A folder
 * that names the cluster without such a sibling stays shared, and the leftover gate lists its path.
 */
function refusePerClusterFolders(root: string, envDir: string, envName: string, kustomizations: VarsKustomization[]) {
  const others = otherClusters(root, envDir);
  const folders = new Map<string, string>();
  for (const k of kustomizations.filter((k) => !k.otherSource && !inFolder(k.path, envDir))) {
    const parts = k.path.split('/');
    const at = parts.indexOf(envName);
    if (at < 0) continue;
    const sibling = others
      .map((other) => [...parts.slice(0, at), other].join('/'))
      .find((dir) => isRepoFolder(root, dir));
    const folder = parts.slice(0, at + 1).join('/');
    if (sibling && !folders.has(folder))
      folders.set(
        folder,
        `${folder} (spec.path of Kustomization ${k.name} in ${k.declaration.file}; beside ${sibling})`,
      );
  }
  if (folders.size === 0) return;
  throw new GeneratorInputError(
    `reference cluster "${envName}": its Flux Kustomizations apply folders of its own outside ${envDir}: ${[...folders.values()].join('; ')}. The generator copies only ${envDir} for the new cluster and carries folders outside it as shared by every cluster, so the new cluster would run the reference's; move them into ${envDir} and point spec.path there (where the cluster folder has no kustomization.yaml, add one listing only its entry files, or Flux's own sync applies them too), or write the new cluster's copy by hand`,
  );
}

/** The names of the folders beside the environment's: the repository's other clusters (kubernetes/clusters/main). */
function otherClusters(root: string, envDir: string): string[] {
  const parent = posix.dirname(envDir);
  if (parent === '.' || !isRepoFolder(root, parent)) return [];
  return readdirSync(join(root, parent), { withFileTypes: true })
    .filter((e) => e.isDirectory() && e.name !== posix.basename(envDir) && !e.name.startsWith('.'))
    .map((e) => e.name);
}

const stringData = (data: unknown): Record<string, string> =>
  Object.fromEntries(Object.entries(data ?? {}).map(([k, v]) => [k, String(v)]));

const isSopsEncrypted = (body: any) => Boolean(body?.sops && typeof body.sops === 'object');

/** YAML files of a folder, repository-relative; hidden files and folders (.git, staging folders) hold no reference manifests. */
function yamlFilesUnder(root: string, dir: string): string[] {
  return listFiles(join(root, dir))
    .filter((f) => /\.ya?ml$/.test(f) && !f.split('/').some((part) => part.startsWith('.')))
    .map((f) => (dir ? `${dir}/${f}` : f));
}

/** The objects of a YAML file; one that does not parse has none here (the walk reports it where it matters). */
function objectsOfFile(root: string, file: string): any[] {
  try {
    return [...readBodies(readRepoFile(root, file, 'utf8'), file)];
  } catch {
    return [];
  }
}

/**
 * The environment folder's entry when it has no kustomization of its own: the folder the cluster's own
 * sync applies and that holds that sync's own file, undefined when there is none. The sync is
 * - a FluxInstance (Flux Operator) over the environment folder or a folder inside it, or a HelmRelease
 *   of the flux-instance chart whose values.instance.sync does the same (joryirving/home-ops): the
 *   operator syncs it as kustomize-controller reads it, with a generated kustomization;
 * - a Flux Kustomization over the folder (flux bootstrap's gotk-sync.yaml in flux-system/, which
 *   writes no kustomization.yaml for the cluster folder itself) or over a folder inside it (home-ops,
 *   cluster-template: kubernetes/<cluster>/flux/config/cluster.yaml holds the Kustomization `cluster`
 *   over ./kubernetes/<cluster>/flux), the sync Flux bootstraps from.
 * Either way the folder is read, built and written as kustomize-controller reads it: with the
 * kustomization it generates (reference.ts generatedResources), none written for the new cluster
 * (Flux regenerates it from what the folder holds on every reconciliation).
 */
function selfSyncedFolder(root: string, envDir: string): string | undefined {
  const objects = yamlFilesUnder(root, envDir).flatMap((file) =>
    objectsOfFile(root, file).map((body) => ({ body, file })),
  );
  // The flux-instance chart's release is told apart by its chart source, which may be another object of the folder.
  markFluxInstanceReleases(objects.filter((o) => o.body && typeof o.body === 'object'));
  const candidates = objects.flatMap(({ body, file }) => {
    const path = makesFluxInstance(body)
      ? fluxInstanceSyncPath(body)
      : isFluxKustomization(body)
        ? normalizePath(String(body.spec?.path ?? ''))
        : undefined;
    if (path === undefined || !file.startsWith(path + '/')) return [];
    return path === envDir || path.startsWith(envDir + '/') ? [path] : [];
  });
  // The outermost one: a nested Kustomization over its own subfolder is no entry.
  return candidates.sort((a, b) => a.length - b.length)[0];
}

/**
 * A folder without a kustomization.yaml whose generated one cannot be the cluster's: the folder holds
 * no sync of its own (made at bootstrap outside the repository, or by a hub), or what Flux would
 * generate leaves out the Kustomization substituting the folder's settings (a `../base` only a
 * written kustomization lists). An environment that defines a ConfigMap some Flux Kustomization of
 * the repository substitutes must then list its resources; an overlay environment keeps its layers
 * in folders and needs none. `why` says which of the two it is (given the substituting file).
 */
function refuseGeneratedRoot(root: string, envDir: string, why: (file: string) => string) {
  const envConfigMaps = yamlFilesUnder(root, envDir)
    .flatMap((file) => objectsOfFile(root, file))
    .filter((b) => b?.kind === 'ConfigMap')
    .map((b) => String(b.metadata?.name));
  if (envConfigMaps.length === 0) return;
  for (const file of yamlFilesUnder(root, '')) {
    const substituted = objectsOfFile(root, file)
      .filter(isFluxKustomization)
      .flatMap(substitutionSources)
      .find((src) => src.kind === 'ConfigMap' && envConfigMaps.includes(src.name));
    if (substituted) {
      throw new GeneratorInputError(
        `${file} substitutes ConfigMap ${substituted.name}, which ${envDir} defines, but ${envDir} has no kustomization.yaml and ${why(file)}: add one listing what the cluster's own sync applies`,
      );
    }
  }
}

function readKustomization(
  root: string,
  envDir: string,
  entryDir: string,
  declaration: ReferenceObject,
  warnings: string[],
  sources: ReferenceSources,
  vars: { name: string; data: Record<string, string> },
): VarsKustomization {
  const body = declaration.body;
  const where = `${declaration.file} Kustomization ${declaration.name}`;
  // No spec.path is the source's root, as Flux reads it.
  const path = normalizePath(typeof body.spec?.path === 'string' ? body.spec.path : './');
  const source = sourceRefOf(body);
  if (!inFolder(path, envDir) && !readsThisRepository(root, sources, source, path)) {
    warnings.push(
      `${where}: source ${describeSource(source)} is not this repository; what it applies is not inspected`,
    );
    return otherSourceKustomization(declaration, path);
  }
  if (path.startsWith('..') || !isRepoFolder(root, path)) {
    throw new GeneratorInputError(
      `${where}: path ${shownPath(body.spec.path)} is not a folder of the reference repository`,
    );
  }
  const tree = collectTree(root, envDir, path, warnings, { fluxApplied: true });
  // The Flux Kustomizations this one applies are reconciled as its inline patches leave them.
  const objects = inTargetNamespace(body.spec?.targetNamespace, tree.objects).map((o) => {
    if (!isFluxKustomization(o.body)) return o;
    const patched = withParentPatches(body, o.body, () =>
      warnings.push(
        `${where}: a JSON6902 patch of Kustomization ${o.name} is not read (its substitution sources are read as written)`,
      ),
    );
    const placed = withSubstitutedPath(body, patched, vars);
    return placed === o.body ? o : { ...o, body: placed };
  });
  return {
    name: declaration.name,
    declaration,
    path,
    dependsOn: (body.spec?.dependsOn ?? []).map((d: any) => String(d?.name)),
    ...substitutionOf(body),
    objects,
    // The folder itself is shared too when it lies outside the environment (./infra/controllers).
    sharedDirs: inFolder(path, envDir) ? tree.sharedDirs : [path, ...tree.sharedDirs],
    holdsSecrets: tree.objects.some(holdsCredentials),
    fullPass: false,
    entry: path === entryDir,
  };
}

/**
 * A nested Kustomization's `spec.path` as Flux reads it: its parent substitutes the objects it applies,
 * the nested declaration included (home-ops' `./kubernetes/apps/${CLUSTER}/kube-system/cilium`), from
 * the cluster's settings when it reads them and from its inline values. Only the path is read so: the
 * file is carried as written, and the new cluster's settings make the same path its own.
 */
function withSubstitutedPath(parent: any, nested: any, vars: { name: string; data: Record<string, string> }): any {
  const path = nested.spec?.path;
  if (typeof path !== 'string' || !path.includes('${') || substitutionDisabled(nested)) return nested;
  const { substituteFrom, substitute: inline } = substitutionOf(parent);
  if (substituteFrom.length === 0 && Object.keys(inline).length === 0) return nested;
  const fromSettings = substituteFrom.some((s) => s.kind === 'ConfigMap' && s.name === vars.name) ? vars.data : {};
  const result = substitute(path, { ...fromSettings, ...inline });
  // A name the generator cannot read (a Secret's) leaves the path as written: reading it then says so.
  if (result.undefinedNames.length > 0) return nested;
  return { ...nested, spec: { ...nested.spec, path: result.text } };
}

/** A Kustomization over another source: carried as it is, nothing of it read here (see flux-sources.ts). */
function otherSourceKustomization(declaration: ReferenceObject, path: string): VarsKustomization {
  const body = declaration.body;
  return {
    name: declaration.name,
    declaration,
    path,
    dependsOn: (body.spec?.dependsOn ?? []).map((d: any) => String(d?.name)),
    ...substitutionOf(body),
    objects: [],
    sharedDirs: [],
    holdsSecrets: false,
    fullPass: false,
    entry: false,
    otherSource: true,
  };
}

/** Kinds kustomize's namespace transformer leaves alone (cluster-scoped). */
const CLUSTER_SCOPED = new Set([
  'Namespace',
  'ClusterIssuer',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'StorageClass',
  'PriorityClass',
  'PersistentVolume',
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
]);

/**
 * The objects as the cluster gets them when the Kustomization sets `spec.targetNamespace` (home-ops'
 * per-app ks.yaml): every namespaced object lands there, whatever its folder says, so its Secrets'
 * credentials are keyed by that namespace.
 */
function inTargetNamespace(targetNamespace: unknown, objects: ReferenceObject[]): ReferenceObject[] {
  if (typeof targetNamespace !== 'string' || targetNamespace === '') return objects;
  return objects.map((o) => (CLUSTER_SCOPED.has(o.kind) ? o : { ...o, namespace: targetNamespace }));
}

/** What the pass split needs to know of a Flux Kustomization. */
interface PassNode {
  name: string;
  dependsOn: string[];
  holdsSecrets: boolean;
  fullPass: boolean;
  /** Flux Kustomizations its folder applies (nested ones). */
  applies?: string[];
  entry?: boolean;
}

/**
 * A Kustomization goes out in the full pass when it holds secrets or depends, at any depth, on one
 * that does, or when the Kustomization whose folder applies it (a nested one) goes out then: it
 * cannot exist before its parent does. The other way round is left to the folder: the generator
 * leaves a later pass's Kustomization out of a folder it writes (the cluster folder, an overlay),
 * and validation refuses a shared folder that would bring one early.
 */
export function markFullPass(kustomizations: PassNode[]) {
  refuseDependencyCycles(kustomizations);
  const byName = new Map(kustomizations.map((k) => [k.name, k]));
  const parentOf = new Map(kustomizations.flatMap((k) => (k.applies ?? []).map((child) => [child, k] as const)));
  const full = (name: string) => byName.get(name)?.fullPass === true;
  for (let changed = true; changed;) {
    changed = false;
    for (const k of kustomizations.filter((k) => !k.fullPass)) {
      k.fullPass = !k.entry && (k.holdsSecrets || k.dependsOn.some(full) || parentOf.get(k.name)?.fullPass === true);
      changed ||= k.fullPass;
    }
  }
}

function refuseDependencyCycles(kustomizations: PassNode[]) {
  const byName = new Map(kustomizations.map((k) => [k.name, k]));
  const done = new Set<string>();
  const visit = (k: PassNode, path: Set<string>) => {
    if (done.has(k.name)) return;
    if (path.has(k.name))
      throw new GeneratorInputError(`Flux Kustomization ${k.name} depends on itself through dependsOn`);
    path.add(k.name);
    for (const d of k.dependsOn) {
      const dep = byName.get(d);
      if (dep) visit(dep, path);
    }
    path.delete(k.name);
    done.add(k.name);
  };
  for (const k of kustomizations) visit(k, new Set());
}

/**
 * Every Flux Kustomization of the reference cluster: those its own sync applies, then, to any
 * depth, those their folders apply (each read once, by name, as Flux keys them), with `applies`
 * naming the nested ones of each.
 */
export function followNested<K extends { name: string; objects: ReferenceObject[]; applies?: string[] }>(
  first: K[],
  read: (declaration: ReferenceObject) => K,
): K[] {
  const all = [...first];
  const seen = new Set(first.map((k) => k.name));
  for (let i = 0; i < all.length; i++) {
    const nested = all[i].objects.filter((o) => isFluxKustomization(o.body));
    all[i].applies = nested.map((o) => o.name);
    for (const o of nested.filter((o) => !seen.has(o.name))) {
      seen.add(o.name);
      all.push(read(o));
    }
  }
  return all;
}

/**
 * Secrets must sit in the environment, in a Kustomization that goes out in the full pass; the
 * shared base is the same for every cluster and the flux-system sync goes out first.
 */
function guardSecrets(ref: ClusterVarsReference) {
  guardReferenceSecrets(
    ref.applied.filter((o) => !ref.entrySecrets.includes(o)),
    ref.kustomizations,
    { moveTo: 'a Flux Kustomization that depends on sealed-secrets', keepIn: "the environment's folder" },
  );
}

/**
 * The folders outside the environment that a target repository needs (copied when missing). One
 * that holds the environment itself would carry the reference cluster's plain credentials along.
 */
function sharedFolders(envDir: string, dirs: string[]): string[] {
  const holding = dirs.find((d) => d === '.' || inFolder(envDir, d));
  if (holding !== undefined) {
    throw new GeneratorInputError(
      `reference: ${holding || '.'} is applied as a shared folder but holds the environment ${envDir}: point Flux Kustomizations at folders beside it`,
    );
  }
  return [...new Set(dirs)];
}

const inFolder = (path: string, folder: string) => path === folder || path.startsWith(folder + '/');

/** Whether a repository-relative path lies in the reference environment's folder. */
export function isInEnv(ref: ClusterVarsReference, path: string): boolean {
  return inFolder(path, ref.envDir);
}

/** Re-reads a kustomization file of the reference (for the pass split). */
export function referenceKustomization(ref: ClusterVarsReference, dir: string): any {
  const file = findKustomizationFile(join(ref.root, dir));
  if (!file) throw new GeneratorInputError(`reference: ${dir} has no kustomization.yaml`);
  return readYamlObject(ref.root, `${dir}/${file}`);
}
