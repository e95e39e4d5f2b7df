/**
 * Reading a reference that uses the cluster-vars environment model: clusters/<env>/ holds the
 * bootstrap, a cluster-vars ConfigMap and the cluster's own secrets, and pulls in a shared base
 * of Flux Kustomizations that substitute cluster-vars (`postBuild.substituteFrom`) into shared
 * platform folders. Environments differ only by cluster-vars and their secrets.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { GeneratorInputError } from './errors';
import { fluxInstanceSyncPath, isFluxInstance } from './flux-instance';
import { isFluxKustomization, normalizePath } from './flux-sync';
import { checkRegenerable } from './protect';
import { collectTree, findKustomizationFile, listFiles, readYamlObject, ReferenceObject } from './reference';
import { parseDocuments } from './yaml-docs';

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
}

export interface VarsConfigMap {
  object: ReferenceObject;
  data: Record<string, string>;
}

export interface ClusterVarsReference {
  root: string;
  envName: string;
  /** clusters/<env> */
  envDir: string;
  /** Every file of the environment folder, relative to it. */
  envFiles: string[];
  /** The environment's kustomization file; undefined where Flux generates it (a FluxInstance syncing a folder without one). */
  rootKustomizationFile: string | undefined;
  /** Flux Operator's entry point: the FluxInstance whose spec.sync applies the environment folder. */
  fluxInstance?: ReferenceObject;
  /** The objects the environment's own kustomization builds (what its flux-system Kustomization applies). */
  applied: ReferenceObject[];
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
export function loadClusterVarsReference(root: string, envName: string): ClusterVarsReference | undefined {
  const envDir = `clusters/${envName}`;
  const absEnv = join(root, envDir);
  if (!existsSync(absEnv) || !statSync(absEnv).isDirectory()) return undefined;
  const rootKustomizationFile = findKustomizationFile(absEnv);
  // Flux Operator syncs the folder as kustomize-controller reads it: without a kustomization file, a generated one.
  const syncedByInstance = !rootKustomizationFile && syncedByFluxInstance(root, envDir);
  if (!rootKustomizationFile && !syncedByInstance) {
    refuseGeneratedRoot(root, envDir);
    return undefined;
  }
  const warnings: string[] = [];
  const applied = collectTree(root, envDir, envDir, warnings, { fluxApplied: syncedByInstance });
  const declarations = applied.objects.filter((o) => isFluxKustomization(o.body));
  const varsObject = applied.objects.find(
    (o) =>
      o.kind === 'ConfigMap' &&
      !o.shared &&
      declarations.some((k) => substitutionSources(k.body).some((s) => s.kind === 'ConfigMap' && s.name === o.name)),
  );
  if (!varsObject) return undefined;

  const read = (d: ReferenceObject) => readKustomization(root, envDir, d, warnings);
  const kustomizations = followNested(declarations.map(read), read);
  markFullPass(kustomizations);
  const vars: VarsConfigMap = {
    object: varsObject,
    data: Object.fromEntries(Object.entries(varsObject.body.data ?? {}).map(([k, v]) => [k, String(v)])),
  };
  const reference: ClusterVarsReference = {
    root,
    envName,
    envDir,
    envFiles: listFiles(absEnv),
    rootKustomizationFile,
    fluxInstance: applied.objects.find((o) => isFluxInstance(o.body) && fluxInstanceSyncPath(o.body) === envDir),
    applied: applied.objects,
    vars,
    kustomizations,
    sharedDirs: sharedFolders(envDir, [...applied.sharedDirs, ...kustomizations.flatMap((k) => k.sharedDirs)]),
    warnings,
  };
  guardSecrets(reference);
  return reference;
}

/**
 * Without a kustomization.yaml Flux generates one from every manifest under the folder, so the
 * generator could not tell what the cluster's own sync applies first. An environment that defines
 * a ConfigMap some Flux Kustomization of the repository substitutes must list its resources; an
 * overlay environment keeps its layers in folders and needs none.
 */
function refuseGeneratedRoot(root: string, envDir: string) {
  const objectsIn = (file: string) => objectsOfFile(root, file);
  const yamlFiles = (dir: string) => yamlFilesUnder(root, dir);
  const envConfigMaps = yamlFiles(envDir)
    .flatMap(objectsIn)
    .filter((b) => b?.kind === 'ConfigMap')
    .map((b) => String(b.metadata?.name));
  if (envConfigMaps.length === 0) return;
  for (const file of yamlFiles('')) {
    const substituted = objectsIn(file)
      .filter(isFluxKustomization)
      .flatMap(substitutionSources)
      .find((src) => src.kind === 'ConfigMap' && envConfigMaps.includes(src.name));
    if (substituted) {
      throw new GeneratorInputError(
        `${file} substitutes ConfigMap ${substituted.name}, which ${envDir} defines, but ${envDir} has no kustomization.yaml: add one listing what the cluster's own sync applies (Flux would generate it from every file in the folder)`,
      );
    }
  }
}

/** The objects of a YAML file; none when it does not parse (the walk that applies it reports that). */
function objectsOfFile(root: string, file: string): any[] {
  try {
    return parseDocuments(readFileSync(join(root, file), 'utf8'), file).map((d) => d.toJS());
  } catch {
    return [];
  }
}

/** Repository-relative YAML files under a folder; hidden folders (.git, staging folders) hold no reference manifests. */
const yamlFilesUnder = (root: string, dir: string) =>
  listFiles(join(root, dir))
    .filter((f) => /\.ya?ml$/.test(f) && !f.split('/').some((part) => part.startsWith('.')))
    .map((f) => (dir ? `${dir}/${f}` : f));

/** Some file of the environment holds a FluxInstance whose spec.sync applies the environment folder itself. */
const syncedByFluxInstance = (root: string, envDir: string) =>
  yamlFilesUnder(root, envDir).some((file) =>
    objectsOfFile(root, file).some((b) => isFluxInstance(b) && fluxInstanceSyncPath(b) === envDir),
  );

function readKustomization(
  root: string,
  envDir: string,
  declaration: ReferenceObject,
  warnings: string[],
): VarsKustomization {
  const body = declaration.body;
  const where = `${declaration.file} Kustomization ${declaration.name}`;
  if (typeof body.spec?.path !== 'string') throw new GeneratorInputError(`${where} has no spec.path`);
  const path = normalizePath(body.spec.path);
  if (path.startsWith('..') || !existsSync(join(root, path)) || !statSync(join(root, path)).isDirectory()) {
    throw new GeneratorInputError(`${where}: path ${body.spec.path} is not a folder of the reference repository`);
  }
  const tree = collectTree(root, envDir, path, warnings, { fluxApplied: true });
  return {
    name: declaration.name,
    declaration,
    path,
    dependsOn: (body.spec?.dependsOn ?? []).map((d: any) => String(d?.name)),
    ...substitutionOf(body),
    objects: tree.objects,
    // The folder itself is shared too when it lies outside the environment (./infra/controllers).
    sharedDirs: inFolder(path, envDir) ? tree.sharedDirs : [path, ...tree.sharedDirs],
    holdsSecrets: tree.objects.some((o) => o.kind === 'Secret' || o.kind === 'SealedSecret'),
    fullPass: false,
  };
}

/** What the pass split needs to know of a Flux Kustomization. */
interface PassNode {
  name: string;
  dependsOn: string[];
  holdsSecrets: boolean;
  fullPass: boolean;
  /** Flux Kustomizations its folder applies (nested ones). */
  applies?: string[];
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
      k.fullPass = k.holdsSecrets || k.dependsOn.some(full) || parentOf.get(k.name)?.fullPass === true;
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
  for (const o of ref.applied.filter((o) => o.kind === 'Secret' || o.kind === 'SealedSecret')) {
    throw new GeneratorInputError(
      `${o.file} holds ${o.kind} ${o.name}, applied by the cluster's own sync in the first pass, before the cluster can open secrets: move it to a Flux Kustomization that depends on sealed-secrets`,
    );
  }
  for (const k of ref.kustomizations) {
    for (const o of k.objects) {
      checkRegenerable(o);
      if (o.kind === 'Secret' && o.shared)
        throw new GeneratorInputError(
          `${o.file} is shared by every cluster and holds Secret ${o.name}: keep secrets in the environment's folder`,
        );
    }
  }
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
  return readYamlObject(join(ref.root, dir, file), `${dir}/${file}`);
}
