/**
 * Which Flux Kustomizations read this repository. Flux reads a Kustomization's `spec.path` in its
 * `spec.sourceRef`, which may be the cluster's own sync (this repository, or the OCI artifact a fleet publishes
 * it as) or any other source: a tenant's GitRepository, another team's OCI artifact, a Bucket. A path in another
 * source is no folder of this repository, whatever folders of the same name this one has (`./` is in every
 * repository), so it is neither read nor built here; foreign-paths.ts moves or reports what it names.
 */
import { sameRepository } from '#libs/git/repository-url';
import { isFluxInstance } from './flux-instance';
import { isFluxKustomization, normalizePath } from './flux-sync';
import { listFiles } from './reference';
import { isRepoFolder, readRepoFile } from './repo-files';
import { readBodies } from './yaml-docs';

/** The cluster's own sync source, as `flux bootstrap` and the Flux Operator name it (any kind). */
export const OWN_SYNC_SOURCE = 'flux-system';

/** What the reference says of its sources: those of its own syncs, their URLs, and every GitRepository it defines. */
export interface ReferenceSources {
  ownNames: Set<string>;
  own: GitSource[];
  gitRepositories: Map<string, GitSource>;
}

/** A Git source: its repository, and the revision it checks out in one spelling (refs/heads/main). */
interface GitSource {
  url: string;
  ref: string;
}

/** GitRepository's spec.ref and FluxInstance's sync.ref in one spelling: the same branch of the same URL is the same files. */
function refOf(ref: unknown): string {
  if (typeof ref === 'string') return ref;
  const r = (ref ?? {}) as Record<string, unknown>;
  if (typeof r.name === 'string') return r.name;
  if (typeof r.commit === 'string') return `commit:${r.commit}`;
  if (typeof r.semver === 'string') return `semver:${r.semver}`;
  if (typeof r.tag === 'string') return `refs/tags/${r.tag}`;
  return typeof r.branch === 'string' ? `refs/heads/${r.branch}` : '';
}

export interface SourceRef {
  kind: string;
  name: string;
}

/** A Kustomization's source; Flux requires the kind, and a missing one is read as Git, as older examples wrote it. */
export const sourceRefOf = (body: any): SourceRef => ({
  kind: String(body?.spec?.sourceRef?.kind ?? 'GitRepository'),
  name: String(body?.spec?.sourceRef?.name ?? ''),
});

/** Files that may define a source or a sync, found without parsing the others (a fleet of thousands of manifests). */
const DEFINES_SOURCE = /^kind:\s*["']?(GitRepository|FluxInstance|Kustomization)\b/m;
const YAML_FILE = /\.ya?ml$/;

/** The reference's sources, read once from its YAML files (hidden folders hold no manifests Flux applies). */
export function referenceSources(root: string): ReferenceSources {
  const sources: ReferenceSources = { ownNames: new Set([OWN_SYNC_SOURCE]), own: [], gitRepositories: new Map() };
  const files = listFiles(root).filter((f) => YAML_FILE.test(f) && !f.split('/').some((p) => p.startsWith('.')));
  for (const file of files) {
    const text = readRepoFile(root, file, 'utf8');
    if (!DEFINES_SOURCE.test(text)) continue;
    for (const body of bodiesOf(text, file)) noteSource(sources, body, file);
  }
  for (const [name, source] of sources.gitRepositories) if (sources.ownNames.has(name)) sources.own.push(source);
  return sources;
}

function bodiesOf(text: string, file: string): readonly any[] {
  try {
    return readBodies(text, file);
  } catch {
    return []; // a file that does not parse is reported by the reading that needs it
  }
}

/**
 * A Kustomization in a folder it applies itself is a cluster's own sync (gotk-sync.yaml, cluster.yaml of
 * home-ops): its source is this repository. A FluxInstance's sync is too.
 */
function noteSource(sources: ReferenceSources, body: any, file: string) {
  const sync = body?.spec?.sync;
  if (isFluxInstance(body) && typeof sync?.url === 'string') sources.own.push({ url: sync.url, ref: refOf(sync.ref) });
  if (isFluxKustomization(body) && typeof body.spec?.path === 'string') {
    const path = normalizePath(body.spec.path);
    // Not one over `./`: every file lies below the root, and a tenant's Kustomization over its own repository's root is no sync.
    if (path !== '.' && file.startsWith(`${path}/`)) sources.ownNames.add(sourceRefOf(body).name);
  }
  if (body?.kind === 'GitRepository' && typeof body.spec?.url === 'string')
    sources.gitRepositories.set(String(body.metadata?.name ?? ''), { url: body.spec.url, ref: refOf(body.spec.ref) });
}

/**
 * Whether Flux reads `path` of this Kustomization in this repository: its source is the cluster's own sync, or a
 * GitRepository the reference defines with its own sync's URL and revision. A GitRepository the reference does not define (made
 * by hand or by another tool) is taken as this repository only where this one holds the path, and never for its
 * root, which every repository has.
 */
export function readsThisRepository(root: string, sources: ReferenceSources, ref: SourceRef, path: string): boolean {
  if (sources.ownNames.has(ref.name)) return true;
  if (ref.kind !== 'GitRepository') return false;
  const git = sources.gitRepositories.get(ref.name);
  // Another branch of the same repository (a tenant's, as in flux2-multi-tenancy) is other files.
  if (git !== undefined) return sources.own.some((own) => sameRepository(own.url, git.url) && own.ref === git.ref);
  return path !== '.' && isRepoFolder(root, path);
}

/** How a reading names another source in its warnings. */
export const describeSource = (ref: SourceRef) => `${ref.kind} ${ref.name}`;
