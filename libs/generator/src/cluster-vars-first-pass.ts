/** The infrastructure pass's files of the cluster-vars model: which wait for the full pass, and the kustomizations listing only the rest. */
import { posix } from 'node:path';
import { ClusterVarsReference, isInEnv, referenceKustomization } from './cluster-vars-reference';
import { GeneratorInputError } from './errors';
import { holdsCredentials } from './filled-secrets';
import { fluxInstanceSyncObjects, fluxInstanceSyncPath } from './flux-instance';
import { FluxLayerKustomization, isFluxKustomization } from './flux-sync';
import { collectTree, isRemote, KUSTOMIZATION_FILES, ReferenceObject } from './reference';
import { parseDocuments } from './yaml-docs';
import { isRepoFolder } from './repo-files';
import { VarsContext, FIRST_PASS_COPIES, clusterPath } from './cluster-vars-context';

export const rootKustomizationPath = (ref: ClusterVarsReference) => `${ref.entryDir}/${ref.rootKustomizationFile}`;

export const isKustomizationFile = (rel: string) => KUSTOMIZATION_FILES.includes(posix.basename(rel));

/**
 * A kustomization of the environment (not its entry) for the first pass: the resources it lists
 * that only the full pass writes are left out (home-ops' apps/<namespace>/kustomization.yaml listing
 * the ks.yaml of an app whose folder holds Secrets), and so is a folder all of whose files are.
 */
export function withoutLaterFiles(ctx: VarsContext, rel: string, raw: Buffer, fullOnly: Set<string>): Buffer {
  const file = `${ctx.ref.envDir}/${rel}`;
  const [doc] = parseDocuments(raw.toString('utf8'), file);
  const resources = doc?.toJS()?.resources;
  if (!Array.isArray(resources)) return raw;
  const dir = posix.dirname(rel);
  const later = (entry: unknown) => {
    if (typeof entry !== 'string' || isRemote(entry)) return false;
    const target = posix.normalize(posix.join(dir, entry));
    const below = ctx.ref.envFiles.filter((f) => f === target || f.startsWith(target + '/'));
    return below.length > 0 && below.every((f) => fullOnly.has(f));
  };
  if (!resources.some(later)) return raw;
  doc.set('resources', doc.createNode(resources.filter((entry) => !later(entry))));
  return Buffer.from(doc.toString({ lineWidth: 0 }));
}

/** The Kustomization Flux Operator creates for the new cluster's FluxInstance (none without one). */
export function instanceSync(ctx: VarsContext): FluxLayerKustomization[] {
  const body = ctx.ref.fluxInstance?.body;
  const sync = fluxInstanceSyncObjects(body).find(isFluxKustomization);
  return sync
    ? [{ name: sync.metadata.name, path: `./${clusterPath(ctx, fluxInstanceSyncPath(body)!)}`, dependsOn: [] }]
    : [];
}

/** Environment files that only the full pass may write: those of full-pass Kustomizations in the environment. */
export function fullPassFiles(ctx: VarsContext): Set<string> {
  const { ref } = ctx;
  const out = new Set<string>();
  const toEnvRel = (file: string) => file.slice(ref.envDir.length + 1);
  const waitsForSecrets = (o: ReferenceObject) => ref.kustomizations.some((k) => k.declaration === o && k.fullPass);
  const later = new Set(ref.kustomizations.filter((k) => k.fullPass).map((k) => k.name));
  const declaredIn = (file: string) =>
    [...ref.applied, ...ref.kustomizations.flatMap((k) => k.objects)].filter((o) => o.file === file);
  for (const k of ref.kustomizations.filter((k) => k.fullPass && !k.declaration.shared)) {
    // A ks.yaml declaring Kustomizations of both passes (an app and its issuers) is written without the later ones instead.
    const split = declaredIn(k.declaration.file).some((o) => isFluxKustomization(o.body) && !later.has(o.name));
    if (!split) out.add(toEnvRel(k.declaration.file));
    if (isInEnv(ref, k.path))
      ref.envFiles.filter((f) => `${ref.envDir}/${f}`.startsWith(k.path + '/')).forEach((f) => out.add(f));
  }
  // A declaration file holding a first-pass object as well cannot be left out.
  for (const file of out) {
    const mixed = ref.applied.find((o) => !o.shared && toEnvRel(o.file) === file && !waitsForSecrets(o));
    if (mixed)
      throw new GeneratorInputError(
        `${mixed.file} mixes ${mixed.kind} ${mixed.name} (first pass) with a Kustomization that waits for the cluster's secrets: split the file`,
      );
  }
  return out;
}

/**
 * The entry folder's kustomization for the infrastructure pass: resources that bring only
 * first-pass objects are kept; a folder (shared or the environment's own) that also brings
 * full-pass ones is opened into its entries; files of the full pass are left out.
 */
export function infraRootKustomization(ctx: VarsContext, raw: Buffer): Buffer {
  const { ref } = ctx;
  const [doc] = parseDocuments(raw.toString('utf8'), rootKustomizationPath(ref));
  const resources = infraEntries(ctx, ref.entryDir, (doc.toJS()?.resources ?? []) as unknown[]);
  doc.set('resources', doc.createNode(resources));
  return Buffer.from(doc.toString({ lineWidth: 0 }));
}

const SPLITTABLE_KEYS = new Set(['apiVersion', 'kind', 'resources']);

/**
 * A first-pass resource as the environment's kustomization lists it. A plain file of a shared folder
 * that was opened cannot be listed from outside that folder (kustomize refuses files outside a
 * kustomization's root), so it is copied, byte for byte, into the cluster folder for this pass; the
 * full pass lists the shared folder itself again and the copy goes.
 */
function firstPassEntry(ctx: VarsContext, rel: string): string {
  const { ref } = ctx;
  // Listed from the entry folder's kustomization (the environment folder, or home-ops' flux/ inside it).
  if (isInEnv(ref, rel) || isRepoFolder(ref.root, rel)) return posix.relative(ref.entryDir, rel) || '.';
  const listed = `${FIRST_PASS_COPIES}/${rel}`;
  ctx.copiedFiles.set(posix.join(posix.relative(ref.envDir, ref.entryDir), listed), rel);
  return listed;
}

function infraEntries(ctx: VarsContext, fromDir: string, entries: unknown[]): string[] {
  const { ref } = ctx;
  const out: string[] = [];
  for (const entry of entries) {
    if (typeof entry !== 'string') continue;
    if (isRemote(entry)) {
      out.push(entry);
      continue;
    }
    const rel = posix.normalize(posix.join(fromDir, entry));
    const waits = broughtBy(ref, rel).some(
      (o) => (isFluxKustomization(o.body) && !ctx.applied.has(o.name)) || holdsCredentials(o),
    );
    if (!waits) {
      out.push(firstPassEntry(ctx, rel));
      continue;
    }
    // A file that waits is left for the full pass; a folder mixing both passes is opened into its entries.
    if (!isRepoFolder(ref.root, rel)) continue;
    const k = referenceKustomization(ref, rel);
    const extra = Object.keys(k).filter((key) => !SPLITTABLE_KEYS.has(key));
    if (extra.length > 0) {
      throw new GeneratorInputError(
        `${rel} holds Kustomizations of both passes and sets ${extra.join(', ')}, so it cannot be opened for the infrastructure pass: keep phases in folders without transformations`,
      );
    }
    out.push(...infraEntries(ctx, rel, k.resources ?? []));
  }
  return out;
}

/** The objects one resource entry of a kustomization brings: a file's, or all a folder pulls in. */
function broughtBy(ref: ClusterVarsReference, rel: string): ReferenceObject[] {
  if (isRepoFolder(ref.root, rel)) return collectTree(ref.root, ref.envDir, rel, []).objects;
  return ref.applied.filter((o) => o.file === rel);
}
