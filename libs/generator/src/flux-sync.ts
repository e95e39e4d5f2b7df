import { posix } from 'node:path';
import { Document } from 'yaml';

export interface FluxSyncInput {
  /** Documents of the reference's sync file (GitRepository and Kustomizations). */
  docs: Document[];
  referenceEnvDir: string;
  clusterDir: string;
  /** Layers (folder names under the cluster) this pass may reference. */
  layers: string[];
  infraLayer: string;
  sourceUrl?: string;
  sourceBranch?: string;
  /** Layers whose Kustomization decrypts SOPS Secrets, and the Secret holding the age key. */
  decrypt?: { layers: string[]; secretName: string };
  /** The cluster folder has its own kustomization.yaml: a Kustomization over the environment root is kept, repointed. */
  rootSync?: boolean;
}

export interface FluxLayerKustomization {
  name: string;
  path: string;
  dependsOn: string[];
}

export const isFluxKustomization = (b: any) =>
  b?.kind === 'Kustomization' && /^kustomize\.toolkit\.fluxcd\.io\//.test(String(b?.apiVersion));
export const isGitRepository = (b: any) =>
  b?.kind === 'GitRepository' && /^source\.toolkit\.fluxcd\.io\//.test(String(b?.apiVersion));

/** Points the GitRepository Flux syncs from at the target repository and branch, when given. */
export function repointGitRepository(doc: Document, url: string | undefined, branch: string | undefined) {
  if (url) doc.setIn(['spec', 'url'], url);
  if (branch) doc.setIn(['spec', 'ref'], doc.createNode({ branch }));
}

/**
 * A GitRepository's `spec.ignore` (.gitignore syntax) that names the reference environment's folder
 * (home-ops: `/*` then `!/kubernetes/main`) names the new cluster's instead: Flux would otherwise
 * leave the new folder out of the artifact, and every path into it would be missing.
 */
export function moveIgnoredPaths(doc: Document, fromDir: string, toDir: string) {
  const ignore = doc.getIn(['spec', 'ignore']);
  if (typeof ignore !== 'string' || fromDir === toDir) return;
  const escaped = fromDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const named = new RegExp(`^(\\s*!?/?)${escaped}(?=/|\\s*$)`, 'gm');
  const moved = ignore.replace(named, (_, lead: string) => `${lead}${toDir}`);
  if (moved !== ignore) doc.setIn(['spec', 'ignore'], moved);
}

/** Flux's kustomize-controller decrypts the Kustomization's SOPS files with the age key in `secretName`. */
export function setSopsDecryption(doc: Document, secretName: string) {
  doc.setIn(['spec', 'decryption'], doc.createNode({ provider: 'sops', secretRef: { name: secretName } }));
}

/** A Flux Kustomization's spec.path as a repository-relative folder: `./clusters/dev/` -> `clusters/dev`. */
export const normalizePath = (path: string) => posix.normalize(String(path).replace(/^\.\//, '')).replace(/\/$/, '');

/** `./clusters/development/apps` -> `apps`; undefined for a path outside the reference environment's layers. */
function layerOf(path: string, envDir: string): string | undefined {
  const norm = normalizePath(path);
  if (!norm.startsWith(envDir + '/')) return undefined;
  const rest = norm.slice(envDir.length + 1);
  return rest.includes('/') ? undefined : rest;
}

/**
 * The cluster's gotk-sync.yaml: the reference's sync objects repointed at the new cluster folder,
 * keeping only Kustomizations whose folder exists after this pass, with `infrastructure` first
 * and every other layer depending on it. A layer without a Kustomization in the reference gets one.
 */
export function buildFluxSync(input: FluxSyncInput): { docs: Document[]; kustomizations: FluxLayerKustomization[] } {
  const out: Document[] = [];
  const byLayer = new Map<string, string>();
  const kept: Array<{ doc: Document; layer: string }> = [];
  const kustomizationsOfRoot: FluxLayerKustomization[] = [];
  let template: any;
  for (const source of input.docs) {
    const doc = source.clone();
    const body = doc.toJS();
    if (isGitRepository(body)) {
      repointGitRepository(doc, input.sourceUrl, input.sourceBranch);
      out.push(doc);
      continue;
    }
    if (!isFluxKustomization(body)) {
      out.push(doc);
      continue;
    }
    if (input.rootSync && normalizePath(String(body.spec?.path ?? '')) === input.referenceEnvDir) {
      // flux bootstrap's own Kustomization over the cluster root: it applies the root kustomization.yaml.
      doc.setIn(['spec', 'path'], `./${input.clusterDir}`);
      kustomizationsOfRoot.push({ name: String(body.metadata?.name), path: `./${input.clusterDir}`, dependsOn: [] });
      out.push(doc);
      continue;
    }
    const layer = layerOf(String(body.spec?.path ?? ''), input.referenceEnvDir);
    if (layer === undefined || !input.layers.includes(layer)) continue;
    doc.setIn(['spec', 'path'], `./${input.clusterDir}/${layer}`);
    byLayer.set(layer, String(body.metadata?.name));
    kept.push({ doc, layer });
    if (layer === input.infraLayer) template ??= body;
    out.push(doc);
  }
  for (const layer of input.layers) {
    // flux-system syncs itself only where the reference says so (bootstrap owns that object).
    if (byLayer.has(layer) || layer === 'flux-system') continue;
    const doc = new Document(defaultKustomization(layer, `./${input.clusterDir}/${layer}`, template));
    byLayer.set(layer, layer);
    kept.push({ doc, layer });
    out.push(doc);
  }
  const infraName = byLayer.get(input.infraLayer);
  const present = new Set(byLayer.values());
  const kustomizations: FluxLayerKustomization[] = [...kustomizationsOfRoot];
  for (const { doc, layer } of kept) {
    if (input.decrypt?.layers.includes(layer)) setSopsDecryption(doc, input.decrypt.secretName);
    // Sealed Secrets need no decryption: a SOPS reference's setting would wait for a sops-age Secret the cluster may not have.
    else if (!input.decrypt) doc.deleteIn(['spec', 'decryption']);
    const deps = dependenciesFor(layer, doc.toJS(), input.infraLayer, infraName, present);
    if (deps.length === 0) doc.deleteIn(['spec', 'dependsOn']);
    else doc.setIn(['spec', 'dependsOn'], doc.createNode(deps.map((name) => ({ name }))));
    kustomizations.push({ name: byLayer.get(layer)!, path: `./${input.clusterDir}/${layer}`, dependsOn: deps });
  }
  return { docs: out, kustomizations };
}

function dependenciesFor(
  layer: string,
  body: any,
  infraLayer: string,
  infraName: string | undefined,
  present: Set<string>,
): string[] {
  if (layer === infraLayer || layer === 'flux-system' || !infraName) return [];
  const declared: string[] = (body.spec?.dependsOn ?? [])
    .map((d: any) => String(d?.name))
    .filter((n: string) => present.has(n));
  return declared.includes(infraName) ? declared : [infraName, ...declared];
}

function defaultKustomization(name: string, path: string, like: any) {
  return {
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name, namespace: like?.metadata?.namespace ?? 'flux-system' },
    spec: {
      interval: like?.spec?.interval ?? '10m0s',
      path,
      prune: true,
      sourceRef: like?.spec?.sourceRef ?? { kind: 'GitRepository', name: 'flux-system' },
    },
  };
}
