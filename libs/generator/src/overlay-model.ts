/**
 * The overlay environment model: the reference environment is a set of layers under
 * clusters/<env>/ (one Flux Kustomization each), over shared bases. The new cluster gets the same
 * layers with its domain patched into every Ingress, external-dns and the issuers repointed, and
 * its Secrets regenerated and protected.
 */
import { shownName } from './shown-values';
import { join } from 'node:path';
import { Document } from 'yaml';
import { Context, GenerateSummary, SOPS_DECRYPTION_SECRET, usesSops } from './context';
import { GeneratorInputError } from './errors';
import { filledByCluster, holdsCredentials } from './filled-secrets';
import {
  discoverReferenceDns,
  isExternalDns,
  isIssuer,
  readExternalDns,
  repointExternalDns,
  rewriteIssuer,
} from './external-dns';
import { buildFluxSync, normalizePath } from './flux-sync';
import { ingressPatches } from './ingress';
import { checkConsistentReuse, checkRegenerable, planCredentials, protectSecret } from './protect';
import { renderSecretGenerators } from './secret-generator-output';
import { moveRemoteKeysIn } from './remote-keys';
import { isExternalSecret } from './external-secrets';
import { findKustomizationFile, ReferenceEnv, ReferenceLayer } from './reference';
import {
  leftoverReferenceValues,
  moveAcmeEmails,
  ReferenceValues,
  sharedValuePatches,
  warnOnce,
  withPatchEntries,
} from './shared-values';
import { planFile, planFolder, stageAndCheck } from './target';
import {
  allBuilds,
  BuiltObject,
  checkBuilt,
  checkWithFileNamesWhereNeeded,
  kustomizeBuild,
  kustomizeBuildAll,
} from './validate';
import { holdsString, isYamlFile, parseDocuments, sharedDocuments, stringifyDocuments } from './yaml-docs';
import { readRepoFile, repoPathExists } from './repo-files';
import { omitReferenceCiphertext } from './reference-ciphertext';
import { renameSealedFiles } from './sealed-names';

interface OverlayContext extends Context {
  ref: ReferenceEnv;
  referenceDomain: string;
  /** The ACME account e-mails of the reference's issuers, shared ones included. */
  acmeEmails: string[];
}

export async function generateFromOverlays(base: Context, ref: ReferenceEnv): Promise<void> {
  const { opts } = base;
  const infra = ref.layers.find((l) => l.name === opts.infraLayer);
  if (!infra)
    throw new GeneratorInputError(`reference environment "${opts.referenceEnv}" has no ${opts.infraLayer}/ layer`);
  const dns = discoverReferenceDns(ref.layers.flatMap((l) => l.objects));
  const referenceDomain = opts.referenceDomain ?? dns.domain;
  if (!referenceDomain)
    throw new GeneratorInputError(
      `reference environment "${opts.referenceEnv}": no external-dns domain filter found to learn its domain from: give --reference-domain`,
    );
  const allObjects = ref.layers.flatMap((l) => l.objects);
  const acmeEmails = [
    ...new Set(allObjects.filter((o) => isIssuer(o.body)).map((o) => o.body.spec?.acme?.email)),
  ].filter((e): e is string => typeof e === 'string');
  const ctx: OverlayContext = { ...base, ref, referenceDomain, acmeEmails };
  ctx.summary.reference_domain = referenceDomain;
  ctx.summary.reference_region = dns.region ?? null;
  ctx.summary.warnings.push(...ref.warnings);
  guardSecretPlacement(ctx, infra);
  planCredentials(
    ctx,
    ref.layers.flatMap((l) => l.objects),
  );

  const rendered = new Map<string, Map<string, Buffer>>();
  const toRender = opts.pass === 'full' ? ref.layers : ref.layers.filter((l) => l.name === opts.infraLayer);
  for (const layer of toRender) rendered.set(layer.name, await renderLayer(ctx, layer));
  checkConsistentReuse(ctx);
  // An infra pass after a full pass keeps what the full pass wrote and still references it.
  const kept =
    opts.pass === 'infra'
      ? ref.layers.filter(
          (l) =>
            !rendered.has(l.name) &&
            l.name !== 'flux-system' &&
            repoPathExists(opts.repoDir, `${ctx.clusterDir}/${l.name}`),
        )
      : [];
  const syncLayers = ['flux-system', ...rendered.keys(), ...kept.map((l) => l.name)];
  rendered.set('flux-system', renderFluxSystem(ctx, syncLayers));
  ctx.summary.layers = [...rendered.keys()].sort();

  await writeValidated(ctx, rendered, toRender, rootKustomization(ctx, syncLayers));
}

/**
 * flux bootstrap's layout: the cluster folder's own kustomization.yaml, which the flux-system
 * Kustomization over the cluster root applies. Kept, listing only the folders this pass writes;
 * without it Flux would generate one over the whole folder and apply every layer at once.
 */
function rootKustomization(ctx: OverlayContext, layers: string[]): { file: string; content: Buffer } | undefined {
  const root = ctx.ref.rootKustomization;
  if (!root) return undefined;
  const resources = ((root.body.resources ?? []) as unknown[]).filter((entry) =>
    layers.includes(normalizePath(String(entry))),
  );
  return { file: root.file, content: Buffer.from(stringifyDocuments([new Document({ ...root.body, resources })])) };
}

/** Infrastructure goes out before the cluster can open anything: it may hold no Secret. Nor may a shared base. */
function guardSecretPlacement(ctx: OverlayContext, infra: ReferenceLayer) {
  for (const layer of ctx.ref.layers) {
    layer.objects.forEach(checkRegenerable);
    for (const o of layer.objects.filter((o) => o.kind === 'Secret' && holdsCredentials(o))) {
      if (o.shared)
        throw new GeneratorInputError(
          `${o.file} is shared by every cluster and holds Secret ${shownName(o.name)}: keep secrets in the environment's layers`,
        );
      if (layer === infra)
        throw new GeneratorInputError(
          `${o.file} holds Secret ${shownName(o.name)}, but the ${infra.name} layer is pushed before the cluster can open sealed secrets`,
        );
    }
  }
}

async function renderLayer(ctx: OverlayContext, layer: ReferenceLayer): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const ingress = ingressPatches(layer.objects, ctx.referenceDomain, ctx.opts.domain);
  ctx.summary.ingress_hosts.push(...ingress.map((p) => p.change));
  // Issuers, external-dns and ACME e-mails of shared bases: the layer's own files are rewritten in place.
  const shared = sharedValuePatches(layer.objects, (doc) => rewriteForCluster(ctx, doc), ctx.opts.clusterName);
  for (const p of shared.filter((p) => isExternalDns(p.object.body)))
    ctx.summary.external_dns.push(
      readExternalDns(p.patched, `${p.object.file} (patched by ${ctx.clusterDir}/${layer.name})`),
    );
  const patches = [...ingress, ...shared];
  const kfile = findKustomizationFile(join(ctx.ref.root, layer.dir));
  for (const rel of layer.files) {
    const raw = readRepoFile(ctx.ref.root, `${layer.dir}/${rel}`);
    if (rel === kfile)
      files.set(
        rel,
        withPatchEntries(
          raw,
          rel,
          patches.map((p) => ({ path: p.file, target: p.target })),
          'last',
        ),
      );
    else files.set(rel, isYamlFile(rel) ? await transformManifestFile(ctx, layer, rel, raw) : raw);
  }
  for (const p of patches) files.set(p.file, Buffer.from(p.content));
  await renderSecretGenerators(ctx, layer.objects, layer.dir, `${ctx.clusterDir}/${layer.name}`, files);
  return files;
}

/** The object rules of this model (Ingresses move by their own patches): external-dns, issuers and any value that is the reference's ACME e-mail. */
function rewriteForCluster(ctx: OverlayContext, doc: Document): boolean {
  const body = doc.toJS();
  const to = {
    referenceDomain: ctx.referenceDomain,
    domain: ctx.opts.domain,
    region: ctx.opts.region,
    clusterName: ctx.opts.clusterName,
  };
  let changed = moveAcmeEmails(doc, ctx.acmeEmails, ctx.opts.acmeEmail);
  if (isExternalDns(body)) changed = repointExternalDns(doc, to) || changed;
  else if (isIssuer(body)) changed = rewriteIssuer(doc, { ...to, acmeEmail: ctx.opts.acmeEmail }) || changed;
  return changed;
}

/** Copies a manifest byte for byte unless it holds something that must change for the new cluster. */
async function transformManifestFile(
  ctx: OverlayContext,
  layer: ReferenceLayer,
  rel: string,
  raw: Buffer,
): Promise<Buffer> {
  const file = `${layer.dir}/${rel}`;
  const objects = layer.objects.filter((o) => o.file === file);
  if (objects.length === 0) return raw;
  // Copy on write: the kept parse is shared; only a document one of the rules may edit is copied.
  const docs = [...sharedDocuments(raw.toString('utf8'), file)];
  let changed = false;
  for (const [i, shared] of docs.entries()) {
    const obj = objects.find((o) => o.index === i);
    if (!obj) continue;
    if (obj.kind === 'Secret' && /^v1$/.test(obj.apiVersion) && !filledByCluster(obj.body)) {
      docs[i] = new Document(
        await protectSecret(ctx, `${ctx.clusterDir}/${layer.name}/${rel}`, obj.body, obj.namespace ?? 'default'),
      );
      changed = true;
      continue;
    }
    if (!mayRewrite(ctx, obj.body)) continue;
    const doc = shared.clone();
    const edited = [rewriteForCluster(ctx, doc), moveRemoteKeysIn(ctx, doc, `${ctx.clusterDir}/${layer.name}/${rel}`)];
    if (edited.includes(true)) [docs[i], changed] = [doc, true];
    if (isExternalDns(obj.body))
      ctx.summary.external_dns.push(readExternalDns(doc.toJS(), `${ctx.clusterDir}/${layer.name}/${rel}`));
  }
  return changed ? Buffer.from(stringifyDocuments(docs)) : raw;
}

/** Whether rewriteForCluster or moveRemoteKeysIn may edit an object (their kinds, or a string equal to a reference ACME e-mail). */
function mayRewrite(ctx: OverlayContext, body: any): boolean {
  if (isExternalDns(body) || isIssuer(body) || (ctx.remoteKeyNames && isExternalSecret(body))) return true;
  return ctx.acmeEmails.length > 0 && holdsString(body, ctx.acmeEmails);
}

function renderFluxSystem(ctx: OverlayContext, layers: string[]): Map<string, Buffer> {
  const flux = ctx.ref.layers.find((l) => l.name === 'flux-system')!;
  const files = new Map<string, Buffer>();
  const syncFiles = new Set(
    flux.objects
      .filter((o) => o.kind === 'Kustomization' && o.apiVersion.startsWith('kustomize.toolkit.fluxcd.io/'))
      .map((o) => o.file),
  );
  if (syncFiles.size === 0)
    throw new GeneratorInputError(`${flux.dir} has no Flux Kustomization to learn the sync layout from`);
  for (const rel of flux.files) {
    const file = `${flux.dir}/${rel}`;
    const raw = readRepoFile(ctx.ref.root, file);
    if (!syncFiles.has(file)) {
      files.set(rel, raw);
      continue;
    }
    const { docs, kustomizations } = buildFluxSync({
      docs: parseDocuments(raw.toString('utf8'), file),
      referenceEnvDir: ctx.ref.envDir,
      clusterDir: ctx.clusterDir,
      layers,
      infraLayer: ctx.opts.infraLayer,
      sourceUrl: ctx.opts.sourceUrl,
      sourceBranch: ctx.opts.sourceBranch,
      decrypt: usesSops(ctx)
        ? {
            layers: ctx.ref.layers
              .filter((l) => l.objects.some((o) => o.kind === 'Secret' && holdsCredentials(o)))
              .map((l) => l.name),
            secretName: SOPS_DECRYPTION_SECRET,
          }
        : undefined,
      rootSync: Boolean(ctx.ref.rootKustomization),
    });
    ctx.summary.kustomizations.push(...kustomizations);
    files.set(rel, Buffer.from(stringifyDocuments(docs)));
  }
  return files;
}

/** Builds every rendered layer with kustomize in a staging folder, then plans the changed files' writes. */
async function writeValidated(
  ctx: OverlayContext,
  rendered: Map<string, Map<string, Buffer>>,
  layers: ReferenceLayer[],
  root?: { file: string; content: Buffer },
) {
  for (const [layer, files] of rendered) {
    omitReferenceCiphertext(ctx, `${ctx.clusterDir}/${layer}`, files, `${ctx.ref.envDir}/${layer}`);
    renameSealedFiles(ctx, `${ctx.clusterDir}/${layer}`, files);
  }
  const staged = new Map<string, Buffer>();
  for (const [layer, files] of rendered) for (const [rel, content] of files) staged.set(`${layer}/${rel}`, content);
  if (root) staged.set(root.file, root.content);
  ctx.summary.shared_paths_copied = await stageAndCheck(
    ctx,
    staged,
    { root: ctx.ref.root, dirs: layers.flatMap((l) => l.sharedDirs) },
    async (staging) => {
      if (!ctx.summary.validated) return;
      const settings = { roots: [ctx.opts.repoDir], kubectl: ctx.opts.kubectl };
      // Passes of one reference, environment and pass kind report alike (see checkWithFileNamesWhereNeeded).
      const sameAs = [ctx.ref.root, ctx.ref.envDir, ctx.opts.pass].join('\0');
      await checkWithFileNamesWhereNeeded(
        ctx.summary,
        async (summary, fileNames) => {
          // Layers build independently: one kubectl builds them all, each as it builds alone; the
          // cluster root (what the bootstrap Kustomization applies) builds beside them.
          const names = [...rendered.keys()];
          const [builds, rootObjects] = await allBuilds([
            kustomizeBuildAll(
              names.map((layer) => ({ absDir: join(staging, layer), label: `${ctx.clusterDir}/${layer}` })),
              { ...settings, fileNames },
            ),
            root ? kustomizeBuild(staging, ctx.clusterDir, { ...settings, fileNames }) : undefined,
          ]);
          builds.forEach((objects, i) => checkLayer(ctx, summary, objects, `${ctx.clusterDir}/${names[i]}`));
          summary.validated!.push(...names.map((l) => `${ctx.clusterDir}/${l}`));
          if (rootObjects) {
            checkLayer(ctx, summary, rootObjects, ctx.clusterDir);
            summary.validated!.push(ctx.clusterDir);
          }
        },
        sameAs,
      );
    },
  );
  for (const [layer, files] of rendered)
    planFolder(ctx, `${ctx.clusterDir}/${layer}`, files, `${ctx.ref.envDir}/${layer}`);
  if (root) planFile(ctx, `${ctx.clusterDir}/${root.file}`, root.content);
}

/** The project's checks and the schemas on what one layer builds to, and the reference's values it still holds (warnings). */
function checkLayer(ctx: OverlayContext, summary: GenerateSummary, objects: BuiltObject[], label: string) {
  checkBuilt(summary, objects, label, ctx.opts.domain);
  warnOnce(summary.warnings, leftoverReferenceValues(objects, referenceValues(ctx), label));
}

const referenceValues = (ctx: OverlayContext): ReferenceValues => ({
  acmeEmails: ctx.acmeEmails,
  domain: ctx.referenceDomain,
  newDomain: ctx.opts.domain,
});
