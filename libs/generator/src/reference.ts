import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import { isFolderForm, referenceEnvDir } from './environment-folder';
import { GeneratorInputError } from './errors';
import { isRemoteReference, remoteResourceError } from './remote-resources';
import { readBodies } from './yaml-docs';
import { isRepoFolder, readRepoFile, repoPathExists } from './repo-files';
import { generatorSecretBody, readSecretGenerators, SecretGeneratorShape } from './secret-generators';

/** One Kubernetes object found by following a layer's kustomization resources. */
export interface ReferenceObject {
  /** Template-root-relative POSIX path of the file holding it. */
  file: string;
  /** Index of the document in that file. */
  index: number;
  apiVersion: string;
  kind: string;
  name: string;
  /** Namespace after every kustomization's `namespace:` (what the cluster would see). */
  namespace: string | undefined;
  /** Namespace as the layer's own kustomization sees it, before its own `namespace:`: used for patch targets. */
  targetNamespace: string | undefined;
  body: any;
  /** True when the file lies outside the reference environment (a shared base). */
  shared: boolean;
  /** A Secret a kustomize secretGenerator of `file` builds from SOPS-encrypted files (`index` is negative). */
  generator?: SecretGeneratorShape;
}

export interface ReferenceLayer {
  name: string;
  /** clusters/<env>/<layer> */
  dir: string;
  /** Every file under the layer folder, relative to the layer folder. */
  files: string[];
  kustomization: any;
  objects: ReferenceObject[];
  /** Folders outside the environment that the layer's resources point to (e.g. base). */
  sharedDirs: string[];
}

export interface ReferenceEnv {
  root: string;
  envName: string;
  envDir: string;
  layers: ReferenceLayer[];
  /**
   * `flux bootstrap`'s layout: the environment folder's own kustomization (file name and body), which
   * the flux-system Kustomization over the cluster root applies (usually listing only flux-system).
   */
  rootKustomization?: { file: string; body: any };
  warnings: string[];
}

export const KUSTOMIZATION_FILES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];

export function findKustomizationFile(absDir: string): string | undefined {
  return KUSTOMIZATION_FILES.find((f) => repoPathExists(absDir, f));
}

export function listFiles(absDir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(absDir, rel), { withFileTypes: true }).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    const child = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...listFiles(absDir, child));
    else if (entry.isFile()) out.push(child);
  }
  return out;
}

export function readYamlObject(root: string, rel: string): any {
  return readBodies(readRepoFile(root, rel, 'utf8'), rel)[0] ?? {};
}

/**
 * The resources kustomize-controller lists when the folder a Flux Kustomization applies has no
 * kustomization file (fluxcd/pkg kustomize `scanManifests`): every `.yaml`/`.yml` file, in lexical
 * order, down the whole tree, except that a subfolder with its own kustomization file is one
 * resource and is not descended into. Paths are relative to `dirRel`. Hidden entries are left out:
 * the source-controller drops `.git/`, `.github/`, `.sops.yaml`, `.flux.yaml` from the artifact by
 * default, and the scaffolder's own hidden files are none of Flux's. Links are not followed (the
 * controller would read a linked file; a reference keeps its manifests in the repository). The controller does not skip a
 * YAML file that is not a Kubernetes object (a Helm values file): it fails the whole Kustomization
 * with "failed to decode Kubernetes YAML", so such a file is refused here rather than copied into a
 * cluster that could never apply it.
 */
export function generatedResources(
  root: string,
  dirRel: string,
  /** Called with each entry (relative to `dirRel`) before it is read: may throw. */
  check: (rel: string) => void = () => {},
): string[] {
  const out: string[] = [];
  const visit = (rel: string) => {
    for (const entry of readdirSync(join(root, dirRel, rel), { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    )) {
      if (entry.name.startsWith('.')) continue;
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      check(child);
      if (entry.isDirectory()) {
        if (findKustomizationFile(join(root, dirRel, child))) out.push(child);
        else visit(child);
      } else if (entry.isFile() && /\.ya?ml$/.test(entry.name)) {
        refuseNonKubernetes(root, posix.join(dirRel, child), dirRel);
        out.push(child);
      }
    }
  };
  visit('');
  return out;
}

/** kustomize's resource check (kyaml `GetValidatedMetadata`): every document names a kind, and a name unless it is a List. */
function refuseNonKubernetes(root: string, fileRel: string, dirRel: string) {
  for (const body of readBodies(readRepoFile(root, fileRel, 'utf8'), fileRel)) {
    if (body === null || body === undefined) continue;
    const kind = typeof body === 'object' ? body.kind : undefined;
    const named = typeof kind === 'string' && (kind.endsWith('List') || Boolean(body.metadata?.name));
    if (!kind || !named)
      throw new GeneratorInputError(
        `${fileRel} is not a Kubernetes manifest (no ${kind ? 'metadata.name' : 'kind'}), but ${dirRel} has no kustomization.yaml, so Flux would list it in the one it generates and fail ("failed to decode Kubernetes YAML"): add a kustomization.yaml to ${dirRel} or move the file`,
      );
  }
}

/** An entry kustomize would fetch (a URL, a git:: source, github.com/... shorthand): refused wherever it is met. */
export const isRemote = isRemoteReference;

interface WalkState {
  root: string;
  envDir: string;
  objects: ReferenceObject[];
  sharedDirs: Set<string>;
  warnings: string[];
  visited: Set<string>;
  /** The root folder is applied by a Flux Kustomization: without a kustomization file, Flux generates one. */
  fluxApplied: boolean;
}

/** A folder's kustomization and the name its messages give it: its own file, or the one Flux generates at a Flux-applied root. */
function kustomizationAt(state: WalkState, dirRel: string, isLayerRoot: boolean): { k: any; file: string } {
  const abs = join(state.root, dirRel);
  const kfile = findKustomizationFile(abs);
  if (kfile) return { k: readYamlObject(state.root, posix.join(dirRel, kfile)), file: posix.join(dirRel, kfile) };
  if (isLayerRoot && state.fluxApplied)
    return {
      k: { resources: generatedResources(state.root, dirRel) },
      file: `${dirRel} (kustomization generated by Flux)`,
    };
  throw new GeneratorInputError(`reference: ${dirRel} is referenced as a resource but has no kustomization.yaml`);
}

/**
 * Follows a kustomization's resources depth first. `outerNamespace` is the namespace set by an
 * enclosing kustomization (the outermost one wins in kustomize); `innerNamespace` is the same but
 * ignoring the layer's own kustomization.
 */
function walk(
  state: WalkState,
  dirRel: string,
  outerNamespace: string | undefined,
  innerNamespace: string | undefined,
  isLayerRoot: boolean,
) {
  if (state.visited.has(dirRel)) return;
  state.visited.add(dirRel);
  const { k, file } = kustomizationAt(state, dirRel, isLayerRoot);
  const own = typeof k.namespace === 'string' ? k.namespace : undefined;
  const effective = outerNamespace ?? own;
  const inner = isLayerRoot ? undefined : (innerNamespace ?? own);
  collectGenerated(state, dirRel, file, k, effective, inner);
  // Components (home-ops' kubernetes/components/common) bring objects and are folders a copy needs, as resources are.
  const entries: Array<[string, unknown]> = [
    ...(k.resources ?? []).map((e: unknown) => ['resources', e]),
    ...(k.bases ?? []).map((e: unknown) => ['bases', e]),
    ...(k.components ?? []).map((e: unknown) => ['components', e]),
  ];
  for (const [field, entry] of entries) {
    if (typeof entry !== 'string') continue;
    // Never fetched: kustomize would, from the reference or from the repository it is copied into.
    if (isRemote(entry)) throw remoteResourceError(file, field, entry);
    const rel = posix.normalize(posix.join(dirRel, entry));
    if (rel.startsWith('..') || posix.isAbsolute(rel))
      throw new GeneratorInputError(`reference: ${dirRel} points outside the template (${entry})`);
    if (!repoPathExists(state.root, rel))
      throw new GeneratorInputError(`reference: ${dirRel} lists ${entry}, which does not exist`);
    if (!rel.startsWith(state.envDir + '/')) state.sharedDirs.add(rel);
    if (isRepoFolder(state.root, rel)) walk(state, rel, effective, inner, false);
    else collectObjects(state, rel, effective, inner);
  }
  addLoadedFolders(state, dirRel, k);
}

/** Files a kustomization loads by path (patches, replacements): no objects of their own, but read by the build. */
function loadedFiles(k: any): unknown[] {
  const paths = (list: unknown) => (Array.isArray(list) ? list.map((e) => (typeof e === 'string' ? e : e?.path)) : []);
  return [
    ...paths(k.patches),
    ...paths(k.patchesJson6902),
    ...paths(k.patchesStrategicMerge),
    ...paths(k.replacements),
  ];
}

/**
 * The folders of loaded files outside the environment (home-ops' `../../../components/replacements/ks.yaml`,
 * which kustomize-controller's loading allows): a copy of the tree into another repository needs them as it
 * needs the folders of its resources. A file at the repository's top is not a folder to copy; the build there
 * fails with kustomize's reason.
 */
function addLoadedFolders(state: WalkState, dirRel: string, k: any) {
  for (const path of loadedFiles(k)) {
    if (typeof path !== 'string' || path.includes('\n')) continue; // an inline patch, not a path
    const rel = posix.normalize(posix.join(dirRel, path));
    if (rel.startsWith('..') || posix.isAbsolute(rel) || rel.startsWith(state.envDir + '/')) continue;
    const folder = posix.dirname(rel);
    if (folder !== '.' && isRepoFolder(state.root, folder) && repoPathExists(state.root, rel))
      state.sharedDirs.add(folder);
  }
}

/** kustomize drops objects annotated `config.kubernetes.io/local-config` (unless "false") from what it builds. */
const isLocalConfig = (body: any) => {
  const value = body.metadata?.annotations?.['config.kubernetes.io/local-config'];
  return value !== undefined && value !== 'false';
};

function collectObjects(
  state: WalkState,
  fileRel: string,
  namespace: string | undefined,
  innerNamespace: string | undefined,
) {
  readBodies(readRepoFile(state.root, fileRel, 'utf8'), fileRel).forEach((body, index) => {
    if (!body || typeof body !== 'object' || !body.kind || isLocalConfig(body)) return;
    const declared = body.metadata?.namespace;
    state.objects.push({
      file: fileRel,
      index,
      apiVersion: String(body.apiVersion ?? ''),
      kind: String(body.kind),
      name: String(body.metadata?.name ?? ''),
      namespace: namespace ?? declared,
      targetNamespace: innerNamespace ?? declared,
      body,
      shared: !fileRel.startsWith(state.envDir + '/'),
    });
  });
}

/** The Secrets a kustomization's secretGenerator builds, as objects (kustomize's namespace transformer sets theirs too). */
function collectGenerated(
  state: WalkState,
  dirRel: string,
  file: string,
  k: any,
  namespace: string | undefined,
  innerNamespace: string | undefined,
) {
  if (k?.secretGenerator === undefined) return;
  for (const g of readSecretGenerators(state.root, dirRel, file, k)) {
    const declared = k.secretGenerator[g.position]?.namespace;
    const ns = namespace ?? (typeof declared === 'string' ? declared : undefined);
    state.objects.push({
      file,
      index: -1 - g.position,
      apiVersion: 'v1',
      kind: 'Secret',
      name: g.name,
      namespace: ns,
      targetNamespace: innerNamespace ?? declared,
      body: generatorSecretBody(g, ns),
      shared: !file.startsWith(state.envDir + '/'),
      generator: g,
    });
  }
}

export interface ReferenceTree {
  objects: ReferenceObject[];
  /** Folders outside the environment that the tree's resources point to (e.g. base). */
  sharedDirs: string[];
}

/**
 * Every object a kustomization folder of the template builds from, following its resources. With
 * `fluxApplied` the folder is a Flux Kustomization's path, and without a kustomization file it is
 * read as the one kustomize-controller generates for it.
 */
export function collectTree(
  root: string,
  envDir: string,
  dir: string,
  warnings: string[],
  { fluxApplied = false } = {},
): ReferenceTree {
  const state: WalkState = {
    root,
    envDir,
    objects: [],
    sharedDirs: new Set(),
    warnings,
    visited: new Set(),
    fluxApplied,
  };
  walk(state, dir, undefined, undefined, true);
  return {
    objects: state.objects,
    sharedDirs: [...state.sharedDirs].filter((d) => isRepoFolder(root, d)),
  };
}

/**
 * The template folder and the reference environment exist, or a message that says which does not
 * (and which environments there are), before any model tries to read them.
 */
export function checkReferenceExists(root: string, envName: string): void {
  if (!existsSync(root) || !statSync(root).isDirectory())
    throw new GeneratorInputError(`template folder ${root} does not exist`);
  const envDir = referenceEnvDir(root, envName);
  if (isFolderForm(envDir)) {
    if (!isRepoFolder(root, envDir))
      throw new GeneratorInputError(`reference environment folder ${envDir}/ does not exist in ${root}`);
    return;
  }
  if (!isRepoFolder(root, 'clusters'))
    throw new GeneratorInputError(`${root} has no clusters/ folder, so it is not a reference repository`);
  const environments = readdirSync(join(root, 'clusters'), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  if (!environments.includes(envName)) {
    throw new GeneratorInputError(
      `reference environment "${envName}" does not exist in ${root}; its environments: ${environments.join(', ') || 'none'}`,
    );
  }
}

/** Loads `clusters/<envName>/` of a template and follows each layer's kustomization. */
export function loadReference(root: string, envName: string): ReferenceEnv {
  const envDir = `clusters/${envName}`;
  const absEnv = join(root, envDir);
  if (!isRepoFolder(root, envDir)) {
    throw new GeneratorInputError(`reference environment "${envName}" does not exist (no ${envDir}/ in ${root})`);
  }
  const warnings: string[] = [];
  const layers: ReferenceLayer[] = [];
  for (const entry of readdirSync(absEnv, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (!entry.isDirectory()) continue;
    const dir = `${envDir}/${entry.name}`;
    const kfile = findKustomizationFile(join(root, dir));
    if (!kfile) {
      warnings.push(`${dir} has no kustomization.yaml and is not a layer`);
      continue;
    }
    const tree = collectTree(root, envDir, dir, warnings);
    layers.push({
      name: entry.name,
      dir,
      files: listFiles(join(root, dir)),
      kustomization: readYamlObject(root, `${dir}/${kfile}`),
      ...tree,
    });
  }
  if (!layers.some((l) => l.name === 'flux-system'))
    throw new GeneratorInputError(`reference environment "${envName}" has no flux-system/ layer`);
  const rootFile = findKustomizationFile(absEnv);
  const rootKustomization = rootFile
    ? { file: rootFile, body: readYamlObject(root, `${envDir}/${rootFile}`) }
    : undefined;
  return { root, envName, envDir, layers, rootKustomization, warnings };
}
