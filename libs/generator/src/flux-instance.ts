/**
 * Flux Operator's entry point: a FluxInstance (fluxcd.controlplane.io/v1) whose `spec.sync` makes
 * the operator create the cluster's source (GitRepository, OCIRepository or Bucket) and the
 * Kustomization over `spec.sync.path`, where flux bootstrap would commit gotk-sync.yaml.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Document, stringify } from 'yaml';
import { normalizePath } from './flux-sync';
import { GeneratorInputError } from './errors';
import { describePath } from './hosts';
import type { ReferenceObject } from './reference';
import { sourceSecretNames } from './source-secrets';
import { BuildSettings, BuiltObject, kustomizeBuild } from './validate';
import { rewriteStrings } from './yaml-docs';

export const isFluxInstance = (b: any) =>
  b?.kind === 'FluxInstance' && /^fluxcd\.controlplane\.io\//.test(String(b?.apiVersion));

/**
 * The FluxInstance an instance object makes: a FluxInstance itself, or the one the `flux-instance`
 * chart renders from a HelmRelease's `values.instance` (named `flux`, in the release's namespace).
 * Everything read of an instance (its sync, the objects the operator creates, its pull secrets) is
 * read from this, so the chart is handled as the custom resource is.
 */
export const asFluxInstance = (body: any): any => (isFluxInstanceRelease(body) ? chartInstance(body) : body);

/** The FluxInstance the flux-instance chart renders from a release's values. */
function chartInstance(body: any): any {
  const values = body.spec?.values ?? {};
  const sync = values.instance?.sync;
  return {
    apiVersion: 'fluxcd.controlplane.io/v1',
    kind: 'FluxInstance',
    // The chart's fullnameOverride defaults to `flux`; its objects go to the release's namespace.
    metadata: {
      name: values.fullnameOverride || 'flux',
      namespace: body.spec?.targetNamespace ?? body.metadata?.namespace,
    },
    // The chart's default sync kind is GitRepository: a release that leaves it out syncs from Git.
    spec: { ...values.instance, ...(sync ? { sync: { kind: 'GitRepository', ...sync } } : {}) },
  };
}

/** Where the FluxInstance's spec is in the object's YAML: its spec, or the chart's values.instance. */
const specPath = (body: any): string[] => (isFluxInstanceRelease(body) ? ['spec', 'values', 'instance'] : ['spec']);

/** The repository folder a FluxInstance (or a flux-instance chart's release) syncs, or undefined when it syncs nothing (no sync). */
export function fluxInstanceSyncPath(body: any): string | undefined {
  const path = asFluxInstance(body)?.spec?.sync?.path;
  return typeof path === 'string' ? normalizePath(path) : undefined;
}

const isHelmRelease = (b: any) =>
  b?.kind === 'HelmRelease' && /^helm\.toolkit\.fluxcd\.io\//.test(String(b?.apiVersion));

/**
 * A HelmRelease marked by `instanceReleases` as one of the `flux-instance` chart. Whether its chart is
 * that one depends on another object (the OCIRepository or HelmChart of its chartRef), so the mark
 * is put on the body by `markFluxInstanceReleases`, which sees the objects around it.
 */
export const isFluxInstanceRelease = (b: any) => isHelmRelease(b) && FLUX_INSTANCE_CHART.has(b);

const FLUX_INSTANCE_CHART = new WeakSet<object>();

/** The chart is Flux Operator's `flux-instance`: the last segment of an OCI chart URL, or the chart name. */
const FLUX_INSTANCE_OCI = /^oci:\/\/.+\/flux-instance\/?$/;

/** Whether a HelmRelease installs the flux-instance chart: `spec.chart.spec.chart`, or the source its chartRef names among `objects`. */
function installsFluxInstanceChart(body: any, objects: readonly any[]): boolean {
  if (body.spec?.chart?.spec?.chart === 'flux-instance') return true;
  const ref = body.spec?.chartRef;
  if (!ref || typeof ref.name !== 'string') return false;
  const namespace = ref.namespace ?? body.metadata?.namespace;
  const source = objects.find(
    (o) =>
      o?.kind === ref.kind &&
      o?.metadata?.name === ref.name &&
      // A namespace the file leaves to its kustomization is the release's, as the chartRef's default is.
      (o.metadata?.namespace ?? namespace) === namespace,
  );
  if (ref.kind === 'OCIRepository') return FLUX_INSTANCE_OCI.test(String(source?.spec?.url ?? ''));
  if (ref.kind === 'HelmChart') return source?.spec?.chart === 'flux-instance';
  return false;
}

/**
 * Marks every HelmRelease among `objects` that installs the flux-instance chart (see
 * isFluxInstanceRelease) and returns them. Such a release is the cluster's Flux entry point as a
 * FluxInstance is; `values.instance.sync` is repointed for the new cluster, so a release whose sync
 * the generator cannot read or move is refused here, naming the file and the field.
 */
export function markFluxInstanceReleases(objects: ReadonlyArray<{ body: any; file: string }>): any[] {
  const bodies = objects.map((o) => o.body);
  const marked: any[] = [];
  for (const { body, file } of objects) {
    if (!isHelmRelease(body) || !installsFluxInstanceChart(body, bodies)) continue;
    refuseUnmovableChartSync(body, file);
    FLUX_INSTANCE_CHART.add(body);
    marked.push(body);
  }
  return marked;
}

function refuseUnmovableChartSync(body: any, file: string) {
  const where = `${file}: HelmRelease ${body.metadata?.name} (the flux-instance chart, the cluster's Flux entry point)`;
  if ((body.spec?.valuesFrom ?? []).length > 0)
    throw new GeneratorInputError(
      `${where} takes values from spec.valuesFrom, which may set values.instance.sync (the folder and repository the new cluster syncs) where the generator cannot move them: put instance.sync in spec.values`,
    );
  const sync = chartInstance(body).spec.sync;
  if (sync === undefined) return;
  if (!SYNC_URL[String(sync?.kind)])
    throw new GeneratorInputError(
      `${where}: spec.values.instance.sync.kind ${JSON.stringify(sync?.kind)} is not a source the generator can repoint (GitRepository, OCIRepository or Bucket)`,
    );
  for (const field of ['kind', 'url', 'ref', 'path', 'name'])
    if (typeof sync[field] === 'string' && sync[field].includes('${'))
      throw new GeneratorInputError(
        `${where}: spec.values.instance.sync.${field} holds a \${VAR} the generator cannot resolve (nothing substitutes it before Helm renders the chart): write the value there`,
      );
}

/** Where the FluxInstance's sync goes in the new cluster and what it pulls from. */
export interface FluxInstanceTarget {
  /** The new cluster's folder, repository-relative (clusters/acme). */
  path: string;
  sourceUrl?: string;
  sourceBranch?: string;
}

/** URL schemes each sync kind fetches: a given URL of another scheme is not the same source. */
const SYNC_URL: Record<string, RegExp> = {
  // file:// only where the operator allowed it (a development target); the schema check warns about it.
  GitRepository: /^(https?|ssh|file):\/\//,
  OCIRepository: /^oci:\/\//,
  Bucket: /^https?:\/\//,
};

/**
 * Points a FluxInstance's sync at the new cluster's folder (in the reference's spelling, `./` or
 * not) and, for a Git sync, at the given repository and branch (the operator reads `ref` as a Git
 * ref name, so a branch is `refs/heads/<branch>`). pullSecret is kept: the Secret the source logs in
 * with is the Git host's or registry's credential, supplied for the new cluster, never generated.
 * Returns what could not be applied (an OCI or Bucket sync has no branch; a URL of another scheme).
 */
export function repointFluxInstance(doc: Document, body: any, target: FluxInstanceTarget, where: string): string[] {
  const sync = asFluxInstance(body)?.spec?.sync;
  if (!sync || typeof sync.path !== 'string') return [];
  const at = [...specPath(body), 'sync'];
  const field = at.join('.');
  const what = `${body.kind} ${body.metadata?.name}`;
  const warnings: string[] = [];
  doc.setIn([...at, 'path'], `${sync.path.startsWith('./') ? './' : ''}${target.path}`);
  const kind = String(sync.kind);
  if (target.sourceUrl !== undefined) {
    if (SYNC_URL[kind]?.test(target.sourceUrl)) doc.setIn([...at, 'url'], target.sourceUrl);
    else
      warnings.push(
        `${where}: ${what} syncs from a ${kind}; the source URL given is not one, so ${field}.url stays ${JSON.stringify(sync.url)}`,
      );
  }
  if (target.sourceBranch !== undefined) {
    if (kind === 'GitRepository') doc.setIn([...at, 'ref'], `refs/heads/${target.sourceBranch}`);
    else
      warnings.push(
        `${where}: ${what} syncs from a ${kind}, which has no branch; ${field}.ref stays ${JSON.stringify(sync.ref)} (the new cluster's folder must be in that artifact)`,
      );
  }
  return warnings;
}

/** The source and Kustomization the operator creates for a FluxInstance's sync, before its kustomize patches. */
export function fluxInstanceSyncObjects(release: any): any[] {
  const body = asFluxInstance(release);
  const sync = body?.spec?.sync;
  if (!sync) return [];
  const namespace = String(body.metadata?.namespace ?? 'flux-system');
  const name = String(sync.name ?? namespace);
  const kind = String(sync.kind);
  const ref =
    kind === 'GitRepository' ? { ref: { name: sync.ref } } : kind === 'OCIRepository' ? { ref: { tag: sync.ref } } : {};
  const source = {
    apiVersion: 'source.toolkit.fluxcd.io/v1',
    kind,
    metadata: { name, namespace },
    spec: {
      interval: sync.interval ?? '1m',
      ...ref,
      ...(kind === 'Bucket' ? { bucketName: sync.ref, endpoint: sync.url } : { url: sync.url }),
      ...(sync.pullSecret ? { secretRef: { name: sync.pullSecret } } : {}),
      ...(sync.provider ? { provider: sync.provider } : {}),
    },
  };
  const kustomization = {
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name, namespace },
    spec: { interval: '10m0s', path: sync.path, prune: true, sourceRef: { kind, name } },
  };
  return [source, kustomization];
}

const SYNC_KINDS = new Set(['GitRepository', 'OCIRepository', 'Bucket', 'Kustomization']);

/**
 * The sync objects as the operator applies them: built with kustomize together with the
 * FluxInstance's `spec.kustomize.patches` that target them (a `postBuild.substituteFrom` the
 * reference adds to the sync Kustomization, a `verify` on its source). Patches aimed at the
 * controllers' objects are not the sync's and are left out (those objects are not built here).
 */
export async function buildFluxInstanceSync(
  release: any,
  label: string,
  settings: BuildSettings,
): Promise<BuiltObject[]> {
  const body = asFluxInstance(release);
  const objects = fluxInstanceSyncObjects(body);
  if (objects.length === 0) return [];
  const patches = (body.spec?.kustomize?.patches ?? []).filter((p: any) => SYNC_KINDS.has(String(p?.target?.kind)));
  const scratch = mkdtempSync(join(tmpdir(), 'flux-instance-sync-'));
  try {
    writeFileSync(join(scratch, 'sync.yaml'), objects.map((o) => stringify(o)).join('---\n'));
    writeFileSync(join(scratch, 'kustomization.yaml'), stringify({ resources: ['sync.yaml'], patches }));
    const built = await kustomizeBuild(scratch, label, { ...settings, roots: [...settings.roots, scratch] });
    return built.map((o) => ({ body: o.body, file: label }));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * The Secrets a FluxInstance logs in with (its sync source, Flux's images and manifests) that the
 * reference does not hold: credentials the Git host or registry issued, set up on a cluster at
 * bootstrap. The new cluster needs its own before the operator can sync: said, never invented.
 */
export function unheldPullSecrets(
  instance: ReferenceObject | undefined,
  objects: ReferenceObject[],
  where: string,
): string[] {
  if (!instance) return [];
  // The chart's release logs in with the Secrets of the FluxInstance it renders.
  if (isFluxInstanceRelease(instance.body)) {
    const body = asFluxInstance(instance.body);
    instance = {
      ...instance,
      kind: 'FluxInstance',
      name: body.metadata.name,
      namespace: body.metadata.namespace,
      body,
    };
  }
  const namespace = instance.namespace ?? 'flux-system';
  const held = (name: string) =>
    objects.some(
      (o) => (o.kind === 'Secret' || o.kind === 'SealedSecret') && o.name === name && o.namespace === namespace,
    );
  return [...new Set(sourceSecretNames(instance))]
    .filter((name) => !held(name))
    .map(
      (name) =>
        `${where}: FluxInstance ${instance.name} logs in with Secret ${namespace}/${name}, which the repository does not hold: create it on the new cluster (credentials its source or registry issued) before Flux Operator can sync`,
    );
}

/**
 * Where the new cluster's FluxInstance still holds a value its runtime info replaced (`replaced`:
 * key -> the reference's value: its cluster name, domain, region): the sync moves, but a literal in
 * its patches or metadata stays the reference's. Listed by path, the value not quoted, never kept
 * without a word.
 */
export function leftoverRuntimeValues(doc: Document, replaced: Record<string, string>, where: string): string[] {
  const found: string[] = [];
  const name = `${String(doc.getIn(['kind']))} ${String(doc.getIn(['metadata', 'name']))}`;
  rewriteStrings(doc, (value, ctx) => {
    for (const [key, old] of Object.entries(replaced))
      if (value.includes(old))
        found.push(
          `${where}: ${name} ${describePath(ctx.path)} still holds the reference's ${key}, which the runtime info moves for the new cluster; set the new cluster's value there by hand`,
        );
    return undefined;
  });
  return found;
}

/** An object that makes Flux Operator run a FluxInstance: the custom resource, or a marked flux-instance chart release. */
export const makesFluxInstance = (b: any) => isFluxInstance(b) || isFluxInstanceRelease(b);
