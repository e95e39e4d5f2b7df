import { existsSync, lstatSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { referenceEnvDir } from './environment-folder';
import { GeneratorInputError } from './errors';
import { Document } from 'yaml';
import { sharedDocuments } from './yaml-docs';
import { unrenderedTemplates } from './template-sources';
import { isRepoFolder, readRepoFile } from './repo-files';

/** Where every refusal points: what the generator reads, and where that is described. */
const LAYOUTS =
  "The generator reads Flux repositories: a clusters/<env>/ folder (or another environment folder, such as kubernetes/<cluster>/) that Flux syncs (flux bootstrap's flux-system, Flux " +
  'Kustomizations), in the layouts of docs/generator.md ("Environment models").';

/** Bounds of the scan, so a huge or hostile repository cannot make the check slow. */
const MAX_FILES = 5000;
const MAX_DEPTH = 8;
/** Larger files are no manifests anyone applies by hand; they are not parsed here. */
const MAX_MANIFEST_BYTES = 1024 * 1024;
const SKIPPED_DIRS = new Set(['.git', 'node_modules']);

const FLUX_API = /^(kustomize\.toolkit\.fluxcd\.io|fluxcd\.controlplane\.io)\//;
const ARGO_API = /^argoproj\.io\//;
const YAML_FILE = /\.ya?ml$/;

/** Repository-relative paths of the files under `rel`, depth-first in name order, within the scan's bounds. */
function filesUnder(root: string, rel: string, depth = 0, out: string[] = []): string[] {
  if (depth > MAX_DEPTH || out.length >= MAX_FILES) return out;
  for (const entry of readdirSync(join(root, rel), { withFileTypes: true }).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    if (out.length >= MAX_FILES) break;
    const child = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory() && !SKIPPED_DIRS.has(entry.name)) filesUnder(root, child, depth + 1, out);
    else if (entry.isFile()) out.push(child);
  }
  return out;
}

interface TypeMeta {
  apiVersion: string;
  kind: string;
  /** Where Flux starts reading this repository for this object: a Kustomization's or a FluxInstance sync's path. */
  entryPath?: string;
}

/** The folder a Flux Kustomization (spec.path) or FluxInstance (spec.sync.path) has Flux read, when it names one. */
function entryPathOf(doc: Document): string | undefined {
  const path = doc.getIn(['spec', 'path']) ?? doc.getIn(['spec', 'sync', 'path']);
  return typeof path === 'string' ? path : undefined;
}

/** apiVersion and kind of each object of a YAML file; a file that does not parse (the models report it) has none. */
function objectsIn(root: string, file: string): TypeMeta[] {
  if (lstatSync(join(root, file)).size > MAX_MANIFEST_BYTES) return [];
  try {
    return sharedDocuments(readRepoFile(root, file, 'utf8'), file).map((d) => ({
      apiVersion: String(d.get('apiVersion') ?? ''),
      kind: String(d.get('kind') ?? ''),
      entryPath: entryPathOf(d),
    }));
  } catch {
    return [];
  }
}

const refuse = (what: string, todo: string) => new GeneratorInputError(`${what}. ${LAYOUTS} ${todo}`);

/**
 * Refuses, with the file it stopped at and what to do, a reference the generator cannot read the way Flux would:
 * template sources Flux would read unrendered (Jinja, makejinja), an Argo CD repository, an environment with no
 * Flux entry point. Reads the objects' apiVersion and kind as YAML (any style). Looks at the reference environment's folder when there is one, else at the whole repository.
 */
export function checkReadableLayout(root: string, envName: string): void {
  if (!existsSync(root) || !statSync(root).isDirectory()) return;
  const envDir = referenceEnvDir(root, envName);
  const hasEnv = isRepoFolder(root, envDir);
  const files = filesUnder(root, hasEnv ? envDir : '');
  const yaml = files.filter((f) => YAML_FILE.test(f));
  const objects = yaml.map((file) => ({ file, types: objectsIn(root, file) }));
  const entryPaths = objects.flatMap(({ types }) =>
    types.filter((t) => FLUX_API.test(t.apiVersion) && t.entryPath !== undefined).map((t) => t.entryPath!),
  );
  const templates = unrenderedTemplates(root, files, entryPaths);
  const template = templates[0] ?? (hasEnv ? undefined : files.find(isMakejinjaConfig));
  if (template)
    throw refuse(
      `${listed(templates, template)} a template source that must be rendered before Flux can read it`,
      'Render the templates (makejinja, task configure, ...) and give the rendered repository as the reference.',
    );
  if (objects.some(({ types }) => types.some((t) => FLUX_API.test(t.apiVersion)))) return;
  for (const { file: f, types } of objects) {
    const kind = types.find((t) => ARGO_API.test(t.apiVersion))?.kind;
    if (kind !== undefined)
      throw refuse(
        `${f} is an Argo CD ${kind} (argoproj.io), and no Flux object was found`,
        'Argo CD repositories are not read; a Flux repository of the same platform is.',
      );
  }
  if (hasEnv)
    throw refuse(
      `${envDir} has no Flux entry point: none of its files holds a Flux Kustomization (kustomize.toolkit.fluxcd.io) or FluxInstance (fluxcd.controlplane.io)`,
      `Bootstrap Flux for that environment (flux bootstrap writes ${envDir}/flux-system) or give --reference-env the environment Flux syncs.`,
    );
}

const isMakejinjaConfig = (f: string) => f === 'makejinja.toml';

/** `a is` or `a (and 3 more files: b, c, d) are`: every file named at once, not one per run. */
function listed(files: readonly string[], first: string): string {
  const rest = files.filter((f) => f !== first);
  if (rest.length === 0) return `${first} is`;
  const shown = rest.slice(0, 10).join(', ') + (rest.length > 10 ? ', ...' : '');
  return `${first} (and ${rest.length} more file${rest.length === 1 ? '' : 's'}: ${shown}) are each`;
}
