import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Document } from 'yaml';
import { buildSealedSecret, parseSealingCertificate, SEALED_BY_ANNOTATION, SealingCertificate, SealingScope, CertificateError } from '../../sealing/src';
import { isClusterName, isDomain, isEmail, isEnvName, isRegion } from '../../validation/src';
import { regenerateSecret, RegistryCredentials } from './credentials';
import { GeneratorInputError } from './errors';
import { discoverReferenceDns, ExternalDnsSettings, isExternalDns, isIssuer, readExternalDns, repointExternalDns, rewriteIssuer } from './external-dns';
import { buildFluxSync, FluxLayerKustomization } from './flux-sync';
import { IngressHostChange, ingressPatches, IngressPatch } from './ingress';
import { findKustomizationFile, listFiles, loadReference, ReferenceEnv, ReferenceLayer } from './reference';
import { checkBuiltObjects, kustomizeBuild } from './validate';
import { parseDocuments, stringifyDocuments } from './yaml-docs';

/** The reference template shipped with the project. */
export const SHIPPED_TEMPLATE = join(projectRoot(__dirname), 'templates/platform');

/** The folder holding package.json: the same from the TypeScript sources and from dist/. */
function projectRoot(from: string): string {
  let dir = from;
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

export type Pass = 'infra' | 'full';

export interface GenerateOptions {
  repoDir: string;
  templateDir?: string;
  referenceEnv?: string;
  clusterName: string;
  domain: string;
  region: string;
  acmeEmail: string;
  pass: Pass;
  /** PEM of the target cluster's sealed-secrets certificate; required for the full pass. */
  sealingCertPem?: string;
  registry?: RegistryCredentials;
  rotateCredentials?: boolean;
  sealingScope?: SealingScope;
  /** The layer pushed first; every other layer depends on it. */
  infraLayer?: string;
  /** The GitRepository URL and branch Flux should sync from (default: the reference's). */
  sourceUrl?: string;
  sourceBranch?: string;
  /** Build every written layer with kustomize before anything is written (default true). */
  validate?: boolean;
  now?: Date;
}

export interface SealedObjectSummary {
  file: string;
  namespace: string;
  name: string;
  type: string;
  keys: string[];
  scope: SealingScope;
  /** True when the existing SealedSecret (same certificate) was kept instead of new credentials. */
  reused: boolean;
}

export interface GenerateSummary {
  cluster_name: string;
  domain: string;
  region: string;
  pass: Pass;
  gitops_path: string;
  reference_env: string;
  reference_domain: string;
  reference_region: string | null;
  layers: string[];
  kustomizations: FluxLayerKustomization[];
  paths_written: string[];
  paths_removed: string[];
  shared_paths_copied: string[];
  objects_sealed: SealedObjectSummary[];
  ingress_hosts: IngressHostChange[];
  external_dns: ExternalDnsSettings[];
  sealing_cert_sha256: string | null;
  validated: string[] | null;
  warnings: string[];
}

/** A generated credential. Only the library caller sees it (to hand it on sealed); the CLI never prints it. */
export interface GeneratedCredential {
  namespace: string;
  name: string;
  key: string;
  value: string;
}

export interface GenerateResult {
  summary: GenerateSummary;
  credentials: GeneratedCredential[];
}

const OWNER_FILE = '.gitops-scaffolder.json';

interface Context {
  opts: Required<Pick<GenerateOptions, 'clusterName' | 'domain' | 'region' | 'acmeEmail' | 'pass' | 'rotateCredentials' | 'sealingScope' | 'infraLayer'>> & GenerateOptions;
  ref: ReferenceEnv;
  referenceDomain: string;
  clusterDir: string;
  cert?: SealingCertificate;
  summary: GenerateSummary;
  credentials: GeneratedCredential[];
}

function checkInputs(opts: GenerateOptions) {
  const fields: Array<[string, unknown, (v: unknown) => string | null]> = [
    ['--cluster-name', opts.clusterName, isClusterName],
    ['--domain', opts.domain, isDomain],
    ['--region', opts.region, isRegion],
    ['--acme-email', opts.acmeEmail, isEmail],
    ['--reference-env', opts.referenceEnv ?? 'development', isEnvName],
  ];
  for (const [flag, value, check] of fields) {
    const problem = check(value);
    if (problem) throw new GeneratorInputError(`${flag} ${problem}`);
  }
  if (!existsSync(opts.repoDir) || !statSync(opts.repoDir).isDirectory()) throw new GeneratorInputError(`--repo ${opts.repoDir} is not a folder`);
}

/** Refuses to write over a cluster folder that another cluster (or a person) owns. */
function checkOwnership(repoDir: string, clusterDir: string, owner: Record<string, string>) {
  const abs = join(repoDir, clusterDir);
  if (!existsSync(abs)) return;
  const markerPath = join(abs, OWNER_FILE);
  if (!existsSync(markerPath)) throw new GeneratorInputError(`${clusterDir}/ exists and was not written by gitops-scaffolder; refusing to overwrite it`);
  const marker = JSON.parse(readFileSync(markerPath, 'utf8'));
  for (const key of Object.keys(owner)) {
    if (marker[key] !== owner[key]) {
      throw new GeneratorInputError(`${clusterDir}/ belongs to another cluster (${key} is ${JSON.stringify(marker[key])}, not ${JSON.stringify(owner[key])})`);
    }
  }
}

export async function generate(options: GenerateOptions): Promise<GenerateResult> {
  checkInputs(options);
  const opts = {
    ...options,
    rotateCredentials: options.rotateCredentials ?? false,
    sealingScope: options.sealingScope ?? ('strict' as SealingScope),
    infraLayer: options.infraLayer ?? 'infrastructure',
  };
  const referenceEnv = opts.referenceEnv ?? 'development';
  const ref = loadReference(resolve(opts.templateDir ?? SHIPPED_TEMPLATE), referenceEnv);
  const infra = ref.layers.find((l) => l.name === opts.infraLayer);
  if (!infra) throw new GeneratorInputError(`reference environment "${referenceEnv}" has no ${opts.infraLayer}/ layer`);
  const allObjects = ref.layers.flatMap((l) => l.objects);
  const dns = discoverReferenceDns(allObjects);
  if (!dns.domain) throw new GeneratorInputError(`reference environment "${referenceEnv}": no external-dns domain filter found to learn its domain from`);
  const clusterDir = `clusters/${opts.clusterName}`;
  const owner = { cluster_name: opts.clusterName, domain: opts.domain, region: opts.region, reference_env: referenceEnv };
  checkOwnership(opts.repoDir, clusterDir, owner);

  let cert: SealingCertificate | undefined;
  if (opts.pass === 'full') {
    if (!opts.sealingCertPem) throw new GeneratorInputError('the full pass needs the target cluster\'s sealing certificate (--sealing-cert FILE)');
    try {
      cert = parseSealingCertificate(opts.sealingCertPem, opts.now);
    } catch (e) {
      if (e instanceof CertificateError) throw new GeneratorInputError(`--sealing-cert: ${e.message}`);
      throw e;
    }
  }
  const ctx: Context = {
    opts,
    ref,
    referenceDomain: dns.domain,
    clusterDir,
    cert,
    credentials: [],
    summary: {
      cluster_name: opts.clusterName,
      domain: opts.domain,
      region: opts.region,
      pass: opts.pass,
      gitops_path: clusterDir,
      reference_env: referenceEnv,
      reference_domain: dns.domain,
      reference_region: dns.region ?? null,
      layers: [],
      kustomizations: [],
      paths_written: [],
      paths_removed: [],
      shared_paths_copied: [],
      objects_sealed: [],
      ingress_hosts: [],
      external_dns: [],
      sealing_cert_sha256: cert?.fingerprintSha256 ?? null,
      validated: opts.validate === false ? null : [],
      warnings: [...ref.warnings],
    },
  };
  guardSecretPlacement(ctx, infra);

  const rendered = new Map<string, Map<string, Buffer>>();
  const toRender = opts.pass === 'full' ? ref.layers : ref.layers.filter((l) => l.name === opts.infraLayer);
  for (const layer of toRender) rendered.set(layer.name, renderLayer(ctx, layer));
  // An infra pass after a full pass keeps what the full pass wrote and still references it.
  const kept = opts.pass === 'infra' ? ref.layers.filter((l) => !rendered.has(l.name) && l.name !== 'flux-system' && existsSync(join(opts.repoDir, clusterDir, l.name))) : [];
  const syncLayers = ['flux-system', ...rendered.keys(), ...kept.map((l) => l.name)];
  rendered.set('flux-system', renderFluxSystem(ctx, syncLayers));
  ctx.summary.layers = [...rendered.keys()].sort();

  await writeValidated(ctx, rendered, toRender);
  writeIfChanged(ctx, `${clusterDir}/${OWNER_FILE}`, Buffer.from(JSON.stringify(owner, null, 2) + '\n'));
  return { summary: ctx.summary, credentials: ctx.credentials };
}

/** Infrastructure goes out before the cluster can open anything: it may hold no Secret. Nor may a shared base. */
function guardSecretPlacement(ctx: Context, infra: ReferenceLayer) {
  for (const layer of ctx.ref.layers) {
    for (const o of layer.objects.filter((o) => o.kind === 'Secret')) {
      if (o.shared) throw new GeneratorInputError(`${o.file} is shared by every cluster and holds Secret ${o.name}: keep secrets in the environment's layers`);
      if (layer === infra) throw new GeneratorInputError(`${o.file} holds Secret ${o.name}, but the ${infra.name} layer is pushed before the cluster can open sealed secrets`);
    }
    if (layer.kustomization?.secretGenerator) throw new GeneratorInputError(`${layer.dir}: secretGenerator is not supported; use Secret manifests the generator can seal`);
  }
}

const isYamlFile = (f: string) => /\.ya?ml$/.test(f) || f === 'Kustomization';

function renderLayer(ctx: Context, layer: ReferenceLayer): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const patches = ingressPatches(layer.objects, ctx.referenceDomain, ctx.opts.domain);
  ctx.summary.ingress_hosts.push(...patches.map((p) => p.change));
  const kfile = findKustomizationFile(join(ctx.ref.root, layer.dir));
  for (const rel of layer.files) {
    const raw = readFileSync(join(ctx.ref.root, layer.dir, rel));
    if (rel === kfile) files.set(rel, withPatches(raw, rel, patches));
    else files.set(rel, isYamlFile(rel) ? transformManifestFile(ctx, layer, rel, raw) : raw);
  }
  for (const p of patches) files.set(p.file, Buffer.from(p.content));
  return files;
}

function withPatches(raw: Buffer, rel: string, patches: IngressPatch[]): Buffer {
  if (patches.length === 0) return raw;
  const [doc] = parseDocuments(raw.toString('utf8'), rel);
  const entries = patches.map((p) => doc.createNode({ path: p.file, target: p.target }));
  const existing = doc.get('patches', true) as any;
  if (existing && Array.isArray(existing.items)) existing.items.push(...entries);
  else doc.set('patches', doc.createNode(patches.map((p) => ({ path: p.file, target: p.target }))));
  return Buffer.from(doc.toString({ lineWidth: 0 }));
}

/** Copies a manifest byte for byte unless it holds something that must change for the new cluster. */
function transformManifestFile(ctx: Context, layer: ReferenceLayer, rel: string, raw: Buffer): Buffer {
  const file = `${layer.dir}/${rel}`;
  const objects = layer.objects.filter((o) => o.file === file);
  if (objects.length === 0) return raw;
  const docs = parseDocuments(raw.toString('utf8'), file);
  const to = { referenceDomain: ctx.referenceDomain, domain: ctx.opts.domain, region: ctx.opts.region, clusterName: ctx.opts.clusterName };
  let changed = false;
  docs.forEach((doc, i) => {
    const obj = objects.find((o) => o.index === i);
    if (!obj) return;
    if (obj.kind === 'Secret' && /^v1$/.test(obj.apiVersion)) {
      docs[i] = new Document(sealSecret(ctx, layer, rel, obj.body, obj.namespace ?? 'default'));
      changed = true;
    } else if (isExternalDns(obj.body)) {
      changed = repointExternalDns(doc, to) || changed;
      ctx.summary.external_dns.push(readExternalDns(doc.toJS(), `${ctx.clusterDir}/${layer.name}/${rel}`));
    } else if (isIssuer(obj.body)) {
      changed = rewriteIssuer(doc, { ...to, acmeEmail: ctx.opts.acmeEmail }) || changed;
    }
  });
  return changed ? Buffer.from(stringifyDocuments(docs)) : raw;
}

/** The SealedSecret already in the target for this Secret, when it was sealed for the same certificate. */
function existingSealed(ctx: Context, layer: string, rel: string, name: string, namespace: string): any | undefined {
  const abs = join(ctx.opts.repoDir, ctx.clusterDir, layer, rel);
  if (ctx.opts.rotateCredentials || !existsSync(abs)) return undefined;
  try {
    return parseDocuments(readFileSync(abs, 'utf8'), rel)
      .map((d) => d.toJS())
      .find(
        (b) =>
          b?.kind === 'SealedSecret' &&
          b.metadata?.name === name &&
          b.metadata?.namespace === namespace &&
          b.metadata?.annotations?.[SEALED_BY_ANNOTATION] === ctx.cert!.fingerprintSha256,
      );
  } catch {
    return undefined;
  }
}

function sealSecret(ctx: Context, layer: ReferenceLayer, rel: string, body: any, namespace: string) {
  const name = String(body.metadata?.name);
  const file = `${ctx.clusterDir}/${layer.name}/${rel}`;
  const summary = { file, namespace, name, type: String(body.type ?? 'Opaque'), scope: ctx.opts.sealingScope };
  const reuse = existingSealed(ctx, layer.name, rel, name, namespace);
  if (reuse) {
    ctx.summary.objects_sealed.push({ ...summary, keys: Object.keys(reuse.spec?.encryptedData ?? {}).sort(), reused: true });
    return reuse;
  }
  const fresh = regenerateSecret(body, namespace, ctx.opts.registry, `${layer.dir}/${rel} Secret ${name}`);
  for (const [key, value] of Object.entries(fresh.data)) ctx.credentials.push({ namespace, name, key, value: value.toString('utf8') });
  ctx.summary.objects_sealed.push({ ...summary, keys: Object.keys(fresh.data).sort(), reused: false });
  return buildSealedSecret({ ...fresh, namespace }, ctx.cert!, ctx.opts.sealingScope);
}

function renderFluxSystem(ctx: Context, layers: string[]): Map<string, Buffer> {
  const flux = ctx.ref.layers.find((l) => l.name === 'flux-system')!;
  const files = new Map<string, Buffer>();
  const syncFiles = new Set(flux.objects.filter((o) => o.kind === 'Kustomization' && o.apiVersion.startsWith('kustomize.toolkit.fluxcd.io/')).map((o) => o.file));
  if (syncFiles.size === 0) throw new GeneratorInputError(`${flux.dir} has no Flux Kustomization to learn the sync layout from`);
  for (const rel of flux.files) {
    const file = `${flux.dir}/${rel}`;
    const raw = readFileSync(join(ctx.ref.root, file));
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
    });
    ctx.summary.kustomizations.push(...kustomizations);
    files.set(rel, Buffer.from(stringifyDocuments(docs)));
  }
  return files;
}

/** The outermost shared folders the rendered layers point to (base/, not base/api/). */
function sharedRoots(layers: ReferenceLayer[]): string[] {
  const all = [...new Set(layers.flatMap((l) => l.sharedDirs))].sort();
  return all.filter((d) => !all.some((other) => other !== d && d.startsWith(other + '/')));
}

/**
 * Writes the layers into a staging folder beside the cluster folder (same depth, so relative
 * references such as ../../../base resolve the same), builds each with kustomize, and only then
 * moves changed files into place. A failed build leaves the repository as it was.
 */
async function writeValidated(ctx: Context, rendered: Map<string, Map<string, Buffer>>, layers: ReferenceLayer[]) {
  const repo = ctx.opts.repoDir;
  const copied: string[] = [];
  for (const shared of sharedRoots(layers)) {
    if (existsSync(join(repo, shared))) continue;
    cpSync(join(ctx.ref.root, shared), join(repo, shared), { recursive: true });
    copied.push(shared);
  }
  const staging = join(repo, 'clusters', `.${ctx.opts.clusterName}.staging-${randomBytes(4).toString('hex')}`);
  try {
    for (const [layer, files] of rendered) {
      for (const [rel, content] of files) writeFile(join(staging, layer, rel), content);
    }
    if (ctx.summary.validated) {
      // Layers build independently: run the kustomize builds side by side.
      const layersToBuild = [...rendered.keys()];
      const builds = await Promise.all(layersToBuild.map((layer) => kustomizeBuild(join(staging, layer), `${ctx.clusterDir}/${layer}`)));
      if (builds.some((b) => !b.available)) {
        ctx.summary.warnings.push('kubectl not found: the tree was not validated with kustomize');
        ctx.summary.validated = null;
      } else {
        builds.forEach((b, i) => checkBuiltObjects(b.output, `${ctx.clusterDir}/${layersToBuild[i]}`, ctx.opts.domain));
        ctx.summary.validated.push(...layersToBuild.map((l) => `${ctx.clusterDir}/${l}`));
      }
    }
  } catch (e) {
    for (const shared of copied) rmSync(join(repo, shared), { recursive: true, force: true });
    throw e;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  ctx.summary.shared_paths_copied = copied;
  for (const [layer, files] of rendered) syncLayer(ctx, `${ctx.clusterDir}/${layer}`, files);
}

/** Makes a layer folder hold exactly `files`: changed files written, stale ones removed, equal ones untouched. */
function syncLayer(ctx: Context, dir: string, files: Map<string, Buffer>) {
  const abs = join(ctx.opts.repoDir, dir);
  if (existsSync(abs)) {
    for (const rel of listFiles(abs)) {
      if (files.has(rel)) continue;
      rmSync(join(abs, rel));
      ctx.summary.paths_removed.push(`${dir}/${rel}`);
    }
  }
  for (const [rel, content] of files) writeIfChanged(ctx, `${dir}/${rel}`, content);
}

function writeIfChanged(ctx: Context, repoRel: string, content: Buffer) {
  const abs = join(ctx.opts.repoDir, repoRel);
  if (existsSync(abs) && readFileSync(abs).equals(content)) return;
  writeFile(abs, content);
  ctx.summary.paths_written.push(repoRel);
}

function writeFile(abs: string, content: Buffer) {
  mkdirSync(dirname(abs), { recursive: true });
  writeFileSync(abs, content);
}

