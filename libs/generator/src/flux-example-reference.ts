/**
 * Reading a reference in the layout Flux's own example repository teaches
 * (fluxcd/flux2-kustomize-helm-example): clusters/<env>/ holds flux-system/ and Flux
 * Kustomizations in plain files (infrastructure.yaml, apps.yaml) that apply shared folders
 * (infrastructure/controllers, apps/base through an overlay) and the environment's overlay
 * (apps/<env>), from the flux-system GitRepository or, since Flux 2.7, from ExternalArtifacts
 * an ArtifactGenerator (clusters/<env>/artifacts.yaml) copies out of it.
 */
import { join } from 'node:path';
import {
  artifactHolds,
  GeneratedArtifact,
  generatedArtifacts,
  gitSourceAliases,
  isArtifactGenerator,
  repositoryPathOf,
} from './artifacts';
import { followNested, markFullPass } from './cluster-vars-reference';
import { GeneratorInputError } from './errors';
import { holdsCredentials } from './filled-secrets';
import { isFluxKustomization, normalizePath } from './flux-sync';
import { guardReferenceSecrets } from './protect';
import { collectTree, findKustomizationFile, listFiles, ReferenceObject } from './reference';
import { isYamlFile, readBodies } from './yaml-docs';
import { isRepoFolder, readRepoFile } from './repo-files';
import { readsThisRepository, ReferenceSources, referenceSources } from './flux-sources';

/** One Flux Kustomization the reference cluster runs. */
export interface ExampleKustomization {
  name: string;
  declaration: ReferenceObject;
  sourceKind: string;
  sourceName: string;
  /** spec.path, normalised (relative to the repository, or to the artifact for an ExternalArtifact source). */
  path: string;
  /** The repository folder it applies; undefined when it comes from a source outside the repository. */
  repoPath: string | undefined;
  /** The folder lies in the reference environment's own overlay (a path part named like the environment). */
  environmentOwned: boolean;
  dependsOn: string[];
  objects: ReferenceObject[];
  sharedDirs: string[];
  holdsSecrets: boolean;
  fullPass: boolean;
  /** Flux Kustomizations its folder applies (nested ones). */
  applies?: string[];
}

export interface FluxExampleReference {
  root: string;
  envName: string;
  /** clusters/<env> */
  envDir: string;
  /** Every file of the environment folder, relative to it (hidden files skipped). */
  envFiles: string[];
  /** Every object declared in the environment folder. */
  envObjects: ReferenceObject[];
  kustomizations: ExampleKustomization[];
  /** ExternalArtifacts the environment's ArtifactGenerators produce, by name. */
  artifacts: Map<string, GeneratedArtifact>;
  /** Repository folders that belong to the environment outside clusters/ (apps/<env>). */
  overlays: string[];
  /** Folders every cluster shares (never edited). */
  sharedDirs: string[];
  warnings: string[];
}

const isHidden = (rel: string) => rel.split('/').some((p) => p.startsWith('.'));

function objectsOfFile(root: string, file: string): ReferenceObject[] {
  return readBodies(readRepoFile(root, file, 'utf8'), file).flatMap((body, index) => {
    if (!body || typeof body !== 'object' || !body.kind) return [];
    const namespace = body.metadata?.namespace;
    return [
      {
        file,
        index,
        apiVersion: String(body.apiVersion ?? ''),
        kind: String(body.kind),
        name: String(body.metadata?.name ?? ''),
        namespace,
        targetNamespace: namespace,
        body,
        shared: false,
      },
    ];
  });
}

/** Replaces path parts named like the reference environment with the new cluster's name (apps/staging -> apps/acme). */
export function forCluster(path: string, envName: string, clusterName: string): string {
  return path
    .split('/')
    .map((part) => (part === envName ? clusterName : part))
    .join('/');
}

const ownedBy = (path: string, envName: string) => path.split('/').includes(envName);

/**
 * The reference in this layout, or undefined when it is not: some Flux Kustomization declared in
 * clusters/<env>/ applies a folder outside it, or an ExternalArtifact.
 */
export function loadFluxExampleReference(root: string, envName: string): FluxExampleReference | undefined {
  const envDir = `clusters/${envName}`;
  const absEnv = join(root, envDir);
  if (!isRepoFolder(root, envDir) || findKustomizationFile(absEnv)) return undefined;
  const envFiles = listFiles(absEnv).filter((f) => !isHidden(f));
  const envObjects = envFiles.filter(isYamlFile).flatMap((f) => objectsOfFile(root, `${envDir}/${f}`));
  const declarations = envObjects.filter((o) => isFluxKustomization(o.body));
  const outside = declarations.some(
    (d) =>
      d.body.spec?.sourceRef?.kind === 'ExternalArtifact' ||
      !normalizePath(String(d.body.spec?.path ?? '')).startsWith(envDir),
  );
  if (!outside) return undefined;

  const warnings: string[] = [];
  const artifacts = new Map<string, GeneratedArtifact>();
  for (const generator of envObjects.filter((o) => isArtifactGenerator(o.body))) {
    const aliases = gitSourceAliases(generator.body);
    for (const artifact of generatedArtifacts(
      generator.body,
      `${generator.file} ArtifactGenerator ${generator.name}`,
    )) {
      const foreign = artifact.rules.find((r) => !aliases.has(r.alias));
      if (foreign)
        warnings.push(
          `${generator.file}: artifact ${artifact.name} copies from @${foreign.alias}, which is not a GitRepository; that part is not inspected`,
        );
      artifacts.set(artifact.name, { name: artifact.name, rules: artifact.rules.filter((r) => aliases.has(r.alias)) });
    }
  }
  const sources = referenceSources(root);
  const read = (d: ReferenceObject) => readKustomization(root, envDir, envName, d, { artifacts, sources }, warnings);
  const kustomizations = followNested(declarations.map(read), read);
  markFullPass(kustomizations);
  const inEnv = (path: string) => path === envDir || path.startsWith(envDir + '/');
  const overlays = [
    ...new Set(
      kustomizations
        .filter((k) => k.environmentOwned && k.repoPath !== undefined && !inEnv(k.repoPath))
        .map((k) => overlayRoot(k.repoPath!, envName)),
    ),
  ];
  const reference: FluxExampleReference = {
    root,
    envName,
    envDir,
    envFiles,
    envObjects,
    kustomizations,
    artifacts,
    overlays,
    sharedDirs: [...new Set(kustomizations.flatMap((k) => k.sharedDirs))].filter(
      (d) => !overlays.some((o) => d === o || d.startsWith(o + '/')),
    ),
    warnings,
  };
  guardSecrets(reference);
  return reference;
}

/** The overlay folder is the path up to the part named like the environment (apps/staging/podinfo -> apps/staging). */
function overlayRoot(path: string, envName: string): string {
  const parts = path.split('/');
  return parts.slice(0, parts.indexOf(envName) + 1).join('/');
}

function readKustomization(
  root: string,
  envDir: string,
  envName: string,
  declaration: ReferenceObject,
  { artifacts, sources }: { artifacts: Map<string, GeneratedArtifact>; sources: ReferenceSources },
  warnings: string[],
): ExampleKustomization {
  const spec = declaration.body.spec ?? {};
  const where = `${declaration.file} Kustomization ${declaration.name}`;
  const path = normalizePath(String(spec.path ?? '.'));
  const sourceKind = String(spec.sourceRef?.kind ?? 'GitRepository');
  const sourceName = String(spec.sourceRef?.name ?? '');
  let repoPath: string | undefined;
  if (
    sourceKind === 'GitRepository' &&
    !readsThisRepository(root, sources, { kind: sourceKind, name: sourceName }, path)
  )
    warnings.push(
      `${where}: source GitRepository ${sourceName} is another repository or revision; it is not inspected`,
    );
  else if (sourceKind === 'GitRepository') repoPath = path;
  else if (sourceKind === 'ExternalArtifact') {
    const artifact = artifacts.get(sourceName);
    if (!artifact)
      throw new GeneratorInputError(
        `${where}: ExternalArtifact ${sourceName} is not produced by an ArtifactGenerator of ${envDir}`,
      );
    repoPath = repositoryPathOf(artifact, path);
    if (!artifactHolds(artifact, path))
      throw new GeneratorInputError(
        `${where}: path ./${path} is not in artifact ${sourceName}: no copy rule of the ArtifactGenerator writes there`,
      );
    if (repoPath === undefined)
      warnings.push(
        `${where}: path ./${path} of artifact ${sourceName} is not a folder copied from the repository; it is not inspected`,
      );
  } else warnings.push(`${where}: source ${sourceKind} ${sourceName} is outside the repository; it is not inspected`);

  const base = {
    name: declaration.name,
    declaration,
    sourceKind,
    sourceName,
    path,
    repoPath,
    dependsOn: (spec.dependsOn ?? []).map((d: any) => String(d?.name)),
    fullPass: false,
  };
  const inEnv = repoPath !== undefined && (repoPath === envDir || repoPath.startsWith(envDir + '/'));
  if (repoPath === undefined || inEnv)
    return { ...base, environmentOwned: inEnv, objects: [], sharedDirs: [], holdsSecrets: false };
  if (repoPath.startsWith('..') || !isRepoFolder(root, repoPath)) {
    throw new GeneratorInputError(`${where}: path ./${path} is not a folder of the reference repository`);
  }
  const environmentOwned = ownedBy(repoPath, envName);
  const owner = environmentOwned ? overlayRoot(repoPath, envName) : envDir;
  const tree = collectTree(root, owner, repoPath, warnings, { fluxApplied: true });
  return {
    ...base,
    environmentOwned,
    objects: tree.objects,
    sharedDirs: environmentOwned ? tree.sharedDirs : [repoPath, ...tree.sharedDirs],
    holdsSecrets: tree.objects.some(holdsCredentials),
  };
}

/** Secrets belong in the environment's overlay: shared folders are the same for every cluster, and the cluster's own sync goes out first. */
function guardSecrets(ref: FluxExampleReference) {
  guardReferenceSecrets(ref.envObjects, ref.kustomizations, {
    moveTo: "the environment's overlay",
    keepIn: "the environment's overlay",
  });
}

/**
 * The values a Kustomization substitutes itself (postBuild.substitute), when it has no other source;
 * undefined when it substitutes nothing or also reads sources whose values the generator cannot see.
 */
export function inlineVariables(body: any): Record<string, string> | undefined {
  const postBuild = body?.spec?.postBuild;
  if (!postBuild?.substitute || (postBuild.substituteFrom ?? []).length > 0) return undefined;
  return Object.fromEntries(Object.entries(postBuild.substitute).map(([k, v]) => [k, String(v)]));
}
