/**
 * The flux-example environment model (the layout of fluxcd/flux2-kustomize-helm-example): the new
 * cluster gets clusters/<name>/ with its bootstrap repointed and its Kustomization files applying
 * the same shared folders, with the per-cluster values of shared objects (ACME e-mail,
 * external-dns, hosts) in its own Kustomizations' spec.patches, and apps/<name>/ as a copy of the
 * reference overlay with every host moved. Shared folders and the reference are never edited.
 */
import { shownName } from './shown-values';
import { join } from 'node:path';
import { Document, parse, stringify } from 'yaml';
import { isArtifactGenerator } from './artifacts';
import { valueForNewCluster } from './cluster-values';
import { Context, SOPS_DECRYPTION_SECRET, usesSops } from './context';
import { GeneratorInputError } from './errors';
import { filledByCluster } from './filled-secrets';
import {
  discoverReferenceDns,
  isExternalDns,
  isIssuer,
  readExternalDns,
  repointExternalDns,
  rewriteIssuer,
} from './external-dns';
import { hostsFluxApplies } from './applied-hosts';
import { ExampleKustomization, FluxExampleReference, forCluster, inlineVariables } from './flux-example-reference';
import { validateStaged } from './flux-example-validate';
import { fluxInstanceSyncPath, isFluxInstance, repointFluxInstance } from './flux-instance';
import {
  isFluxKustomization,
  isGitRepository,
  normalizePath,
  repointGitRepository,
  setSopsDecryption,
} from './flux-sync';
import { HostMapping, HostOccurrence, hostsIn, moveHosts } from './hosts';
import { forEachInlinePatch, hostsInPatch, patchTarget, replacements, rewritePatch } from './patches';
import { checkConsistentReuse, planCredentials, protectSecret } from './protect';
import { renderSecretGenerators } from './secret-generator-output';
import { moveRemoteKeysIn } from './remote-keys';
import { findKustomizationFile, listFiles, ReferenceObject } from './reference';
import { substituteObject } from './substitution';
import { settleProvenance } from './provenance';
import { checkOwnership, ownerOf, planFolder, planOwnerMarker, stageFoldersAndCheck } from './target';
import { moveAcmeEmails, sharedValuePatches, withPatchEntries } from './shared-values';
import { isYamlFile, parseDocuments, readBodies, stringifyDocuments, YamlPath } from './yaml-docs';
import { readRepoFile } from './repo-files';
import { omitReferenceCiphertext } from './reference-ciphertext';
import { renameSealedFiles } from './sealed-names';

export interface ExampleContext extends Context {
  ref: FluxExampleReference;
  hosts: HostMapping;
  /** Names of the Kustomizations this pass applies. */
  applied: Set<string>;
  /** Every host of the reference environment, where it is. */
  referenceHosts: HostOccurrence[];
  /** The ACME account e-mails of the reference's issuers. */
  acmeEmails: string[];
}

export async function generateFromFluxExample(base: Context, ref: FluxExampleReference): Promise<void> {
  const { opts } = base;
  const allObjects = ref.kustomizations.flatMap((k) => k.objects);
  const dns = discoverReferenceDns(allObjects);
  const referenceDomain = opts.referenceDomain ?? dns.domain;
  const ctx: ExampleContext = {
    ...base,
    ref,
    hosts: new HostMapping(opts.domain, referenceDomain, opts.hostMap ?? {}),
    applied: new Set(ref.kustomizations.filter((k) => opts.pass === 'full' || !k.fullPass).map((k) => k.name)),
    referenceHosts: referenceHostOccurrences(ref, await hostsFluxApplies(ref, opts.kubectl)),
    acmeEmails: referenceAcmeEmails(ref),
  };
  Object.assign(ctx.summary, {
    environment_model: 'flux-example',
    reference_domain: referenceDomain ?? '',
    reference_region: dns.region ?? null,
  });
  ctx.summary.warnings.push(...ref.warnings);
  ctx.hosts.checkCovers(ctx.referenceHosts);
  ctx.summary.hosts = hostChanges(ctx);
  // The environment's own files count for the sources they declare (their Secrets live in the overlays).
  planCredentials(ctx, [...ref.envObjects, ...allObjects]);

  const folders = new Map<string, Map<string, Buffer>>([[ctx.clusterDir, renderClusterFolder(ctx)]]);
  // The reference folder each new folder is rendered from.
  const sources = new Map([[ctx.clusterDir, ref.envDir]]);
  for (const overlay of writtenOverlays(ctx)) {
    const target = forCluster(overlay, ref.envName, opts.clusterName);
    checkOwnership(opts.repoDir, target, ownerOf(opts));
    folders.set(target, await renderOverlay(ctx, overlay));
    sources.set(target, overlay);
  }
  for (const [dir, files] of folders) {
    omitReferenceCiphertext(ctx, dir, files, sources.get(dir)!);
    renameSealedFiles(ctx, dir, files);
  }
  checkConsistentReuse(ctx);
  ctx.summary.overlay_paths = [...folders.keys()].filter((dir) => dir !== ctx.clusterDir).sort();
  ctx.summary.shared_paths_copied = await stageFoldersAndCheck(
    ctx,
    folders,
    { root: ref.root, dirs: ref.sharedDirs },
    (staged) =>
      validateStaged(
        {
          ctx,
          hosts: ctx.hosts,
          applied: ctx.applied,
          inOtherRepositories: new Set(ctx.ref.kustomizations.filter(inAnotherRepository).map((k) => k.name)),
          referenceHosts: new Set(ctx.referenceHosts.map((o) => o.host)),
          referenceValues: { acmeEmails: ctx.acmeEmails, domain: ctx.hosts.referenceDomain, newDomain: opts.domain },
        },
        staged,
      ),
  );
  await settleProvenance(ctx);
  for (const [dir, files] of folders) {
    planFolder(ctx, dir, files, sources.get(dir));
    if (dir !== ctx.clusterDir) planOwnerMarker(ctx, dir);
  }
}

/** The overlays this pass writes: those of the Kustomizations it applies. */
function writtenOverlays(ctx: ExampleContext): string[] {
  return ctx.ref.overlays.filter((overlay) =>
    ctx.ref.kustomizations.some(
      (k) =>
        ctx.applied.has(k.name) &&
        k.repoPath !== undefined &&
        (k.repoPath === overlay || k.repoPath.startsWith(overlay + '/')),
    ),
  );
}

/**
 * Every host the reference environment holds: in the objects its Kustomizations apply, in the
 * files of its overlays (patches included) and in its Kustomizations' inline patches.
 */
export function referenceHostOccurrences(ref: FluxExampleReference, applied?: Set<string>): HostOccurrence[] {
  const found: HostOccurrence[] = [];
  const describe = (o: { kind: string; namespace?: string; name: string }) =>
    `${o.kind} ${o.namespace ? o.namespace + '/' : ''}${o.name}`;
  for (const k of ref.kustomizations) {
    const vars = inlineVariables(k.declaration.body);
    for (const o of k.objects) {
      const hosts = hostsIn(vars ? substituteObject(o.body, vars).body : o.body, `${o.file} ${describe(o)}`);
      // A shared file's host that the overlay replaces never reaches the cluster (see hostsFluxApplies).
      found.push(...(applied && o.shared ? hosts.filter((h) => applied.has(h.host)) : hosts));
    }
    forEachInlinePatch(k.declaration.body, (patch, target) =>
      found.push(...hostsInPatch(patch, target, `${k.declaration.file} Kustomization ${k.name} patch`)),
    );
  }
  for (const overlay of ref.overlays) {
    for (const file of listFiles(join(ref.root, overlay)).filter(isYamlFile)) {
      const rel = `${overlay}/${file}`;
      for (const body of readBodies(readRepoFile(ref.root, rel, 'utf8'), rel)) {
        if (body?.kind && body.kind !== 'Kustomization')
          found.push(
            ...hostsIn(
              body,
              `${rel} ${describe({ kind: body.kind, namespace: body.metadata?.namespace, name: String(body.metadata?.name ?? '') })}`,
            ),
          );
        if (body?.kind === 'Kustomization')
          forEachInlinePatch(body, (patch, target) => found.push(...hostsInPatch(patch, target, `${rel} patch`)));
      }
    }
  }
  const seen = new Set<string>();
  return found.filter((o) => !seen.has(`${o.host}\0${o.where}`) && seen.add(`${o.host}\0${o.where}`));
}

function hostChanges(ctx: ExampleContext): Array<{ from: string; to: string }> {
  const hosts = [...new Set(ctx.referenceHosts.map((o) => o.host))].sort();
  return hosts.map((from) => ({ from, to: ctx.hosts.target(from) ?? from }));
}

/**
 * The object rules of this model: hosts move, issuers get the new ACME e-mail, external-dns the new
 * domain, and any other value that is exactly the reference's ACME e-mail becomes the new one.
 */
function rewriteForCluster(ctx: ExampleContext, doc: Document): boolean {
  const body = doc.toJS();
  let changed = moveHosts(doc, ctx.hosts);
  changed = moveAcmeEmails(doc, ctx.acmeEmails, ctx.opts.acmeEmail) || changed;
  const { domain, region, clusterName, acmeEmail } = ctx.opts;
  const to = { referenceDomain: ctx.hosts.referenceDomain ?? domain, domain, region, clusterName };
  if (isIssuer(body)) changed = rewriteIssuer(doc, { ...to, acmeEmail }) || changed;
  if (isExternalDns(body) && ctx.hosts.referenceDomain) changed = repointExternalDns(doc, to) || changed;
  return changed;
}

/** Rewrites the inline patches of a Kustomization document; returns whether any changed. */
function rewriteInlinePatches(ctx: ExampleContext, doc: Document, listPath: YamlPath): boolean {
  const patches = (doc.getIn(listPath) as any)?.toJSON?.() as any[] | undefined;
  let changed = false;
  (patches ?? []).forEach((p, i) => {
    if (typeof p?.patch !== 'string') return;
    const next = rewritePatch(parse(p.patch), p.target, (doc) => rewriteForCluster(ctx, doc));
    if (next === undefined) return;
    doc.setIn([...listPath, i, 'patch'], stringify(next));
    changed = true;
  });
  return changed;
}

/** The patch that gives the new cluster its values in a shared object, or undefined when it needs none. */
function patchFor(
  ctx: ExampleContext,
  o: ReferenceObject,
): { patch: string; target: Record<string, string> } | undefined {
  const doc = new Document(o.body);
  if (!rewriteForCluster(ctx, doc)) return undefined;
  const ops = replacements(o.body, doc.toJS());
  if (isExternalDns(o.body))
    ctx.summary.external_dns.push(readExternalDns(doc.toJS(), `${o.file} (patched by the cluster's Kustomization)`));
  return { patch: stringify(ops), target: patchTarget(o) };
}

/** clusters/<name>/: the reference environment's files with every Kustomization, source and generator pointed at the new cluster. */
function renderClusterFolder(ctx: ExampleContext): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const rel of ctx.ref.envFiles) {
    const file = `${ctx.ref.envDir}/${rel}`;
    const raw = readRepoFile(ctx.ref.root, file);
    if (!isYamlFile(rel)) {
      files.set(rel, raw);
      continue;
    }
    const docs = parseDocuments(raw.toString('utf8'), file);
    const kept = docs.filter((doc) => {
      const body = doc.toJS();
      return !isFluxKustomization(body) || ctx.applied.has(String(body.metadata?.name));
    });
    // Dropped: a file whose every document is a Kustomization of a later pass. A file with no
    // document at all is kept as it is: Flux's example ships flux-system/gotk-components.yaml and
    // gotk-sync.yaml as comment-only placeholders, listed by flux-system/kustomization.yaml.
    // `flux bootstrap` overwrites those two files but keeps an existing kustomization.yaml (with the
    // platform's patches to the controllers), so that kustomization must keep listing them, and
    // they must exist for it to build.
    if (docs.length > 0 && kept.length === 0) continue;
    const changed = kept.map((doc) => renderClusterDocument(ctx, doc, rel)).some(Boolean);
    files.set(rel, changed || kept.length !== docs.length ? Buffer.from(stringifyDocuments(kept)) : raw);
  }
  return files;
}

function renderClusterDocument(ctx: ExampleContext, doc: Document, rel: string): boolean {
  const body = doc.toJS();
  const { envName, envDir } = ctx.ref;
  const { clusterName } = ctx.opts;
  if (isGitRepository(body)) {
    // The reference's repository: a leftover wherever the new cluster syncs from another (the leftover gate).
    if (typeof body.spec?.url === 'string') (ctx.referenceFacts.repositoryUrls ??= []).push(body.spec.url);
    repointGitRepository(doc, ctx.opts.sourceUrl, ctx.opts.sourceBranch);
    return Boolean(ctx.opts.sourceUrl || ctx.opts.sourceBranch);
  }
  const instancePath = isFluxInstance(body) ? fluxInstanceSyncPath(body) : undefined;
  if (instancePath !== undefined) {
    // Flux Operator's entry point: the sync moves to the new cluster's folder.
    const path = instancePath === envDir ? ctx.clusterDir : forCluster(instancePath, envName, clusterName);
    const where = `${ctx.clusterDir}/${rel}`;
    ctx.summary.warnings.push(...repointFluxInstance(doc, body, { ...ctx.opts, path }, where));
    return true;
  }
  if (isArtifactGenerator(body)) {
    (body.spec?.artifacts ?? []).forEach((artifact: any, i: number) =>
      (artifact?.copy ?? []).forEach((copy: any, j: number) => {
        for (const key of ['from', 'to'])
          if (typeof copy?.[key] === 'string')
            doc.setIn(['spec', 'artifacts', i, 'copy', j, key], forCluster(copy[key], envName, clusterName));
      }),
    );
    return true;
  }
  if (!isFluxKustomization(body)) return false;
  renderKustomization(ctx, doc, readKustomizationOf(ctx, body));
  return true;
}

/** The reference's reading of a Flux Kustomization the new cluster declares (every one was read, nested ones too). */
const readKustomizationOf = (ctx: ExampleContext, body: any): ExampleKustomization =>
  ctx.ref.kustomizations.find((c) => c.name === body.metadata?.name)!;

/** A Kustomization whose GitRepository is another repository (a tenant's): read by the reference as not inspected. */
const inAnotherRepository = (k: ExampleKustomization) => k.sourceKind === 'GitRepository' && k.repoPath === undefined;

/** A Flux Kustomization for the new cluster, in the cluster folder or nested in an overlay: its own path, values and patches. */
function renderKustomization(ctx: ExampleContext, doc: Document, k: ExampleKustomization) {
  const { envName } = ctx.ref;
  const { clusterName } = ctx.opts;
  // A path in another repository is not this generator's to move: --path-map moves it, or it is a warning
  // (foreign-paths.ts). The document keeps what it says (an overlay's patch says ./staging where the base says none).
  const written = doc.getIn(['spec', 'path']);
  const path = inAnotherRepository(k)
    ? normalizePath(typeof written === 'string' ? written : k.path)
    : forCluster(k.path, envName, clusterName);
  if (!inAnotherRepository(k)) doc.setIn(['spec', 'path'], `./${path}`);
  if (k.holdsSecrets && usesSops(ctx)) setSopsDecryption(doc, SOPS_DECRYPTION_SECRET);
  // Sealed Secrets need no decryption: a SOPS reference's setting would wait for a sops-age Secret the cluster may not have.
  else if (!usesSops(ctx)) doc.deleteIn(['spec', 'decryption']);
  rewriteInlinePatches(ctx, doc, ['spec', 'patches']);
  rewriteInlineVariables(ctx, doc);
  if (!k.environmentOwned) addClusterPatches(ctx, doc, k);
  ctx.summary.kustomizations.push({
    name: k.name,
    path: `./${path}`,
    dependsOn: k.dependsOn,
  });
}

/** Inline postBuild.substitute values that name the reference cluster (its hosts, domain, region, e-mail, name) become the new cluster's. */
function rewriteInlineVariables(ctx: ExampleContext, doc: Document) {
  const substitute = doc.toJS().spec?.postBuild?.substitute ?? {};
  const from = {
    domain: ctx.hosts.referenceDomain,
    region: ctx.summary.reference_region ?? undefined,
    acmeEmails: ctx.acmeEmails,
    envName: ctx.ref.envName,
  };
  for (const [key, value] of Object.entries(substitute)) {
    if (typeof value !== 'string') continue;
    const next = ctx.hosts.target(value) ?? valueForNewCluster(key, value, from, ctx.opts);
    if (next !== undefined && next !== value) doc.setIn(['spec', 'postBuild', 'substitute', key], next);
  }
}

/** The ACME account e-mails of the reference's issuers. */
function referenceAcmeEmails(ref: FluxExampleReference): string[] {
  return ref.kustomizations
    .flatMap((k) => k.objects.filter((o) => isIssuer(o.body)).map((o) => o.body.spec?.acme?.email))
    .filter((e): e is string => typeof e === 'string');
}

/** Per-cluster values of the shared objects a Kustomization applies go into its own spec.patches, after the reference's. */
function addClusterPatches(ctx: ExampleContext, doc: Document, k: ExampleKustomization) {
  const patches = k.objects.map((o) => patchFor(ctx, o)).filter((p): p is NonNullable<typeof p> => p !== undefined);
  if (patches.length === 0) return;
  const existing = (doc.getIn(['spec', 'patches']) as any)?.toJSON?.() ?? [];
  doc.setIn(['spec', 'patches'], doc.createNode([...existing, ...patches]));
}

/** apps/<name>/: the reference overlay with every host moved, its Secrets protected, and host patches for what it takes from shared bases. */
async function renderOverlay(ctx: ExampleContext, overlay: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const target = forCluster(overlay, ctx.ref.envName, ctx.opts.clusterName);
  const abs = join(ctx.ref.root, overlay);
  const kfile = findKustomizationFile(abs);
  const patchTargets = new Map<string, any>(
    kfile
      ? (
          (readBodies(readRepoFile(ctx.ref.root, `${overlay}/${kfile}`, 'utf8'), `${overlay}/${kfile}`)[0]?.patches ??
            []) as any[]
        )
          .filter((p) => typeof p?.path === 'string')
          .map((p) => [normalizePath(p.path), p.target])
      : [],
  );
  const ownHosts = new Set<string>();
  // Folders of the overlay that Kustomizations of a later pass apply wait for that pass (they hold its Secrets).
  const later = ctx.ref.kustomizations
    .filter((k) => !ctx.applied.has(k.name) && k.repoPath?.startsWith(overlay + '/'))
    .map((k) => k.repoPath!.slice(overlay.length + 1));
  const written = (rel: string) =>
    !rel.split('/').some((p) => p.startsWith('.')) && !later.some((dir) => rel.startsWith(dir + '/'));
  for (const rel of listFiles(abs).filter(written)) {
    const raw = readRepoFile(ctx.ref.root, `${overlay}/${rel}`);
    if (!isYamlFile(rel)) {
      files.set(rel, raw);
      continue;
    }
    const docs = parseDocuments(raw.toString('utf8'), `${overlay}/${rel}`);
    const dropped = new Set<number>();
    let changed = false;
    for (const [i, doc] of docs.entries()) {
      const body = doc.toJS();
      if (rel === kfile) changed = rewriteInlinePatches(ctx, doc, ['patches']) || changed;
      else if (body?.kind === 'Secret' && body.apiVersion === 'v1' && !filledByCluster(body)) {
        if (ctx.opts.pass === 'infra')
          throw new GeneratorInputError(
            `${overlay}/${rel} holds Secret ${shownName(body.metadata?.name)}, but the infra pass writes it: apply it through a Flux Kustomization of its own (it then goes out in the full pass)`,
          );
        docs[i] = new Document(
          await protectSecret(
            ctx,
            `${target}/${rel}`,
            body,
            body.metadata?.namespace ?? namespaceOf(ctx, overlay) ?? 'default',
          ),
        );
        changed = true;
      } else if (Array.isArray(body) && patchTargets.has(rel)) {
        const next = rewritePatch(body, patchTargets.get(rel), (doc) => rewriteForCluster(ctx, doc));
        if (next !== undefined) docs[i] = new Document(next);
        changed = next !== undefined || changed;
      } else if (isFluxKustomization(body)) {
        // A nested Kustomization of a later pass waits for it (the file stays: the overlay's kustomization lists it).
        if (ctx.applied.has(String(body.metadata?.name))) renderKustomization(ctx, doc, readKustomizationOf(ctx, body));
        else dropped.add(i);
        changed = true;
      } else if (body?.kind) {
        hostsIn(body, rel).forEach((o) => ownHosts.add(o.host));
        changed = rewriteForCluster(ctx, doc) || changed;
        changed = moveRemoteKeysIn(ctx, doc, `${target}/${rel}`) || changed;
      }
    }
    const kept = docs.filter((_, i) => !dropped.has(i));
    files.set(rel, changed ? Buffer.from(stringifyDocuments(kept)) : raw);
  }
  const objects = ctx.ref.kustomizations.flatMap((k) => k.objects);
  await renderSecretGenerators(ctx, objects, overlay, target, files, namespaceOf(ctx, overlay));
  addSharedValuePatches(ctx, overlay, files, ownHosts);
  return files;
}

/** The namespace the overlay's kustomization sets for its objects. */
function namespaceOf(ctx: ExampleContext, overlay: string): string | undefined {
  return ctx.ref.kustomizations.find((k) => k.repoPath === overlay)?.objects.find((o) => !o.shared)?.namespace;
}

/**
 * Per-cluster values that reach the overlay from a shared base (an issuer's ACME e-mail and zones,
 * external-dns settings, hosts the overlay's own files do not set) move through a JSON6902 patch
 * per object in the folder a Kustomization of this pass applies (the overlay or one of its
 * folders), listed before that folder's own patches so those win. The base stays as it is; a
 * folder without a kustomization file has no place for patches, and what it keeps of the reference
 * is listed by validation.
 */
function addSharedValuePatches(
  ctx: ExampleContext,
  overlay: string,
  files: Map<string, Buffer>,
  ownHosts: Set<string>,
) {
  const applied = ctx.ref.kustomizations.filter(
    (k) => ctx.applied.has(k.name) && (k.repoPath === overlay || k.repoPath?.startsWith(overlay + '/')),
  );
  for (const k of applied) {
    const dir = k.repoPath!.slice(overlay.length + 1);
    const kfile = findKustomizationFile(join(ctx.ref.root, k.repoPath!));
    const inDir = (rel: string) => (dir ? `${dir}/${rel}` : rel);
    if (!kfile || !files.has(inDir(kfile))) continue;
    const patches = sharedValuePatches(
      k.objects,
      (doc) => rewriteForCluster(ctx, doc),
      ctx.opts.clusterName,
      (_op, before) => !(typeof before === 'string' && ownHosts.has(before)),
    );
    for (const p of patches) files.set(inDir(p.file), Buffer.from(p.content));
    for (const p of patches.filter((p) => isExternalDns(p.object.body)))
      ctx.summary.external_dns.push(readExternalDns(p.patched, `${p.object.file} (patched by ${k.repoPath})`));
    const entries = patches.map((p) => ({ path: p.file, target: p.target }));
    files.set(inDir(kfile), withPatchEntries(files.get(inDir(kfile))!, `${k.repoPath}/${kfile}`, entries, 'first'));
  }
}
