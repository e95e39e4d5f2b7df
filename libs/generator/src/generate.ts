import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Document } from 'yaml';
import { FLUX_ENCRYPTED_REGEX, isAgeRecipient, sopsEncrypt } from '../../sealing/src/sops';
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
export type SecretsBackend = 'sealed-secrets' | 'sops';

/** The Secret Flux's kustomize-controller decrypts SOPS files with (holding the cluster's age private key). */
export const SOPS_DECRYPTION_SECRET = 'sops-age';

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
  /** sealed-secrets (default: sealed for the cluster's certificate) or sops (encrypted for age recipients). */
  secretsBackend?: SecretsBackend;
  /** Public age keys (age1...) of the cluster, for the sops backend. */
  ageRecipients?: string[];
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
  /** The sealing scope (sealed-secrets) or "sops". */
  scope: SealingScope | 'sops';
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
  /** Files outside the cluster folder that the pass maintains (the repository's .sops.yaml). */
  repo_files: string[];
  secrets_backend: SecretsBackend;
  age_recipients: string[];
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
  if (opts.pass === 'full' && opts.secretsBackend === 'sops') {
    const recipients = opts.ageRecipients ?? [];
    if (recipients.length === 0) throw new GeneratorInputError('the sops backend needs the cluster\'s age public key (--age-recipient age1...)');
    const bad = recipients.find((r) => !isAgeRecipient(r));
    if (bad !== undefined) throw new GeneratorInputError(`--age-recipient must be an age public key (age1...), not ${JSON.stringify(String(bad).slice(0, 12))}`);
  } else if (opts.pass === 'full') {
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
      repo_files: [],
      secrets_backend: opts.secretsBackend ?? 'sealed-secrets',
      age_recipients: opts.ageRecipients ?? [],
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
  for (const layer of toRender) rendered.set(layer.name, await renderLayer(ctx, layer));
  // An infra pass after a full pass keeps what the full pass wrote and still references it.
  const kept = opts.pass === 'infra' ? ref.layers.filter((l) => !rendered.has(l.name) && l.name !== 'flux-system' && existsSync(join(opts.repoDir, clusterDir, l.name))) : [];
  const syncLayers = ['flux-system', ...rendered.keys(), ...kept.map((l) => l.name)];
  rendered.set('flux-system', renderFluxSystem(ctx, syncLayers));
  ctx.summary.layers = [...rendered.keys()].sort();

  await writeValidated(ctx, rendered, toRender);
  if (opts.pass === 'full' && opts.secretsBackend === 'sops') writeSopsRules(ctx);
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

async function renderLayer(ctx: Context, layer: ReferenceLayer): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const patches = ingressPatches(layer.objects, ctx.referenceDomain, ctx.opts.domain);
  ctx.summary.ingress_hosts.push(...patches.map((p) => p.change));
  const kfile = findKustomizationFile(join(ctx.ref.root, layer.dir));
  for (const rel of layer.files) {
    const raw = readFileSync(join(ctx.ref.root, layer.dir, rel));
    if (rel === kfile) files.set(rel, withPatches(raw, rel, patches));
    else files.set(rel, isYamlFile(rel) ? await transformManifestFile(ctx, layer, rel, raw) : raw);
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
async function transformManifestFile(ctx: Context, layer: ReferenceLayer, rel: string, raw: Buffer): Promise<Buffer> {
  const file = `${layer.dir}/${rel}`;
  const objects = layer.objects.filter((o) => o.file === file);
  if (objects.length === 0) return raw;
  const docs = parseDocuments(raw.toString('utf8'), file);
  const to = { referenceDomain: ctx.referenceDomain, domain: ctx.opts.domain, region: ctx.opts.region, clusterName: ctx.opts.clusterName };
  let changed = false;
  for (const [i, doc] of docs.entries()) {
    const obj = objects.find((o) => o.index === i);
    if (!obj) continue;
    if (obj.kind === 'Secret' && /^v1$/.test(obj.apiVersion)) {
      docs[i] = new Document(await protectSecret(ctx, layer, rel, obj.body, obj.namespace ?? 'default'));
      changed = true;
    } else if (isExternalDns(obj.body)) {
      changed = repointExternalDns(doc, to) || changed;
      ctx.summary.external_dns.push(readExternalDns(doc.toJS(), `${ctx.clusterDir}/${layer.name}/${rel}`));
    } else if (isIssuer(obj.body)) {
      changed = rewriteIssuer(doc, { ...to, acmeEmail: ctx.opts.acmeEmail }) || changed;
    }
  }
  return changed ? Buffer.from(stringifyDocuments(docs)) : raw;
}

const sameRecipients = (a: string[], b: string[]) => [...a].sort().join(',') === [...b].sort().join(',');

/** Whether a document already in the target protects this Secret for the same certificate or the same age recipients. */
function protectsFor(ctx: Context, b: any, name: string, namespace: string): boolean {
  if (b?.metadata?.name !== name || b.metadata?.namespace !== namespace) return false;
  if (ctx.opts.secretsBackend === 'sops') {
    return b.kind === 'Secret' && Array.isArray(b.sops?.age) && sameRecipients(b.sops.age.map((r: any) => r.recipient), ctx.opts.ageRecipients ?? []);
  }
  return b.kind === 'SealedSecret' && b.metadata?.annotations?.[SEALED_BY_ANNOTATION] === ctx.cert!.fingerprintSha256;
}

/** The protected Secret already in the target, when it needs no change (same key material, no rotation asked). */
function existingProtected(ctx: Context, layer: string, rel: string, name: string, namespace: string): any | undefined {
  const abs = join(ctx.opts.repoDir, ctx.clusterDir, layer, rel);
  if (ctx.opts.rotateCredentials || !existsSync(abs)) return undefined;
  try {
    return parseDocuments(readFileSync(abs, 'utf8'), rel)
      .map((d) => d.toJS())
      .find((b) => protectsFor(ctx, b, name, namespace));
  } catch {
    return undefined;
  }
}

/** Fresh credentials for a reference Secret, sealed for the cluster or SOPS-encrypted for its age keys. */
async function protectSecret(ctx: Context, layer: ReferenceLayer, rel: string, body: any, namespace: string) {
  const name = String(body.metadata?.name);
  const file = `${ctx.clusterDir}/${layer.name}/${rel}`;
  const sops = ctx.opts.secretsBackend === 'sops';
  const summary = { file, namespace, name, type: String(body.type ?? 'Opaque'), scope: sops ? ('sops' as const) : ctx.opts.sealingScope };
  const reuse = existingProtected(ctx, layer.name, rel, name, namespace);
  if (reuse) {
    ctx.summary.objects_sealed.push({ ...summary, keys: Object.keys((sops ? reuse.stringData : reuse.spec?.encryptedData) ?? {}).sort(), reused: true });
    return reuse;
  }
  const fresh = regenerateSecret(body, namespace, ctx.opts.registry, `${layer.dir}/${rel} Secret ${name}`);
  for (const [key, value] of Object.entries(fresh.data)) ctx.credentials.push({ namespace, name, key, value: value.toString('utf8') });
  ctx.summary.objects_sealed.push({ ...summary, keys: Object.keys(fresh.data).sort(), reused: false });
  if (!sops) return buildSealedSecret({ ...fresh, namespace }, ctx.cert!, ctx.opts.sealingScope);
  const metadata: Record<string, unknown> = { name, namespace };
  if (Object.keys(fresh.labels).length > 0) metadata.labels = fresh.labels;
  const stringData = Object.fromEntries(Object.entries(fresh.data).map(([k, v]) => [k, v.toString('utf8')]));
  return sopsEncrypt({ apiVersion: 'v1', kind: 'Secret', metadata, type: fresh.type, stringData }, { recipients: ctx.opts.ageRecipients!, now: ctx.opts.now });
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
      decrypt:
        ctx.opts.secretsBackend === 'sops'
          ? { layers: ctx.ref.layers.filter((l) => l.objects.some((o) => o.kind === 'Secret')).map((l) => l.name), secretName: SOPS_DECRYPTION_SECRET }
          : undefined,
    });
    ctx.summary.kustomizations.push(...kustomizations);
    files.set(rel, Buffer.from(stringifyDocuments(docs)));
  }
  return files;
}

/**
 * The repository's .sops.yaml gets (or keeps) a creation rule for this cluster's folder first, so
 * that `sops` run by a person encrypts new files there for the same recipients. Other rules stay.
 */
function writeSopsRules(ctx: Context) {
  const path = '.sops.yaml';
  const abs = join(ctx.opts.repoDir, path);
  // Cluster names are DNS labels (no dots), so the folder needs no escaping.
  const pathRegex = `^${ctx.clusterDir}/.*\\.ya?ml$`;
  const doc = existsSync(abs) ? parseDocuments(readFileSync(abs, 'utf8'), path)[0] ?? new Document({}) : new Document({});
  const current = (doc.toJS()?.creation_rules ?? []) as any[];
  const ours = { path_regex: pathRegex, encrypted_regex: FLUX_ENCRYPTED_REGEX, age: (ctx.opts.ageRecipients ?? []).join(',') };
  doc.set('creation_rules', doc.createNode([ours, ...current.filter((r) => r?.path_regex !== pathRegex)]));
  writeIfChanged(ctx, path, Buffer.from(doc.toString({ lineWidth: 0 })));
  ctx.summary.repo_files.push(path);
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

