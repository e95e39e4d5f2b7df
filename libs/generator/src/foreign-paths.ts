import { posix } from 'node:path';
import type { Document } from 'yaml';
import type { Context } from './context';
import { referenceEnvironmentName } from './environment-folder';
import { GeneratorInputError } from './errors';
import { isYamlFile, parseFresh, stringifyDocuments } from './yaml-docs';
import { repoPathExists } from './repo-files';

/**
 * Paths the new cluster hands to other repositories: a Flux Kustomization's `spec.path` in a source
 * that is not this repository (a tenant's `path: ./staging`), an ImageUpdateAutomation's
 * `spec.update.path` (where image automation pushes: `./deploy/dev`). The generator cannot see those
 * repositories, so a path there that names the reference environment is either moved by
 * `--path-map OLD=NEW` (`path_map` in a request) or reported, never kept quietly.
 */
const PATH_FIELDS: ReadonlyArray<{ api: RegExp; kind: string; path: readonly string[] }> = [
  { api: /^kustomize\.toolkit\.fluxcd\.io\//, kind: 'Kustomization', path: ['spec', 'path'] },
  { api: /^image\.toolkit\.fluxcd\.io\//, kind: 'ImageUpdateAutomation', path: ['spec', 'update', 'path'] },
];

const MAX_PATH = 512;

/** `./staging/`, `staging` and `./staging` are one path to Flux. */
const normalised = (path: string) => posix.normalize(path.replace(/^\.\//, '')).replace(/\/+$/, '') || '.';

/** A problem with a --path-map value (what Flux accepts as a path in a repository), or null. */
export function pathMapValueProblem(value: string): string | null {
  if (value.length === 0 || value.length > MAX_PATH) return `must be 1 to ${MAX_PATH} characters`;
  // eslint-disable-next-line no-control-regex -- control characters are exactly what this refuses
  if (/[\u0000-\u001f\u007f]/.test(value)) return 'must not contain control characters';
  if (value.startsWith('/')) return 'must be relative to the repository root (./path)';
  if (value.split('/').includes('..')) return 'must not leave the repository (..)';
  return null;
}

/** Checks every entry of a path map (both sides), as the command line and the service's request check do. */
export function checkPathMap(pathMap: Record<string, string>): void {
  for (const [from, to] of Object.entries(pathMap)) {
    const problem = pathMapValueProblem(from) ?? pathMapValueProblem(to);
    if (problem) throw new GeneratorInputError(`--path-map ${from}=${to}: ${problem}`);
  }
}

/** Whether `path` has a segment that is the reference environment's name (`./deploy/dev` for `dev`). */
const namesEnvironment = (path: string, envName: string) => normalised(path).split('/').includes(envName);

/**
 * Whether a path lies in another repository: where image automation pushes always may; a Kustomization's
 * when its source is not the cluster's own sync (`flux-system`) and the reference does not hold the path, or,
 * for an overlay's patch that names no source, when the reference does not hold the path.
 */
function inAnotherRepository(ctx: Context, body: any, path: string): boolean {
  if (body.kind !== 'Kustomization') return true;
  // An overlay's patch names no source (its base does): a path this repository does not hold is another's.
  if (body.spec?.sourceRef === undefined) return !repoPathExists(ctx.referenceRoot, normalised(path));
  const source = body.spec.sourceRef;
  if (!['GitRepository', 'OCIRepository', 'Bucket'].includes(source.kind) || source.name === 'flux-system')
    return false;
  return !repoPathExists(ctx.referenceRoot, normalised(path));
}

/**
 * The file with every mapped path moved; each path into another repository that still names the
 * reference environment and has no mapping is a warning naming the file, the object and the field.
 * Each move is recorded in the summary (`paths_moved`), which `checkPathMapUsed` reads.
 */
export function movePathsIntoOtherRepositories(ctx: Context, repoPath: string, content: Buffer): Buffer {
  if (!isYamlFile(repoPath)) return content;
  const text = content.toString('utf8');
  if (!/\bpath:/.test(text)) return content;
  const pathMap = ctx.opts.pathMap ?? {};
  const mapped = new Map(Object.entries(pathMap).map(([from, to]) => [normalised(from), to]));
  let docs: Document[];
  try {
    docs = parseFresh(text, repoPath);
  } catch {
    return content; // not the business of this step: validation reports files that do not parse
  }
  let changed = false;
  // kubernetes/main is `main` in another repository's paths, as clusters/dev is `dev`.
  const envName = referenceEnvironmentName(ctx.referenceRoot, ctx.opts.referenceEnv);
  for (const doc of docs) {
    const body = doc.toJS();
    const field = PATH_FIELDS.find((f) => f.kind === body?.kind && f.api.test(String(body?.apiVersion ?? '')));
    const path = field && doc.getIn(field.path);
    if (!field || typeof path !== 'string' || !inAnotherRepository(ctx, body, path)) continue;
    const target = mapped.get(normalised(path));
    const where = `${repoPath}: ${body.kind} ${body.metadata?.namespace ? body.metadata.namespace + '/' : ''}${body.metadata?.name} ${field.path.join('.')}`;
    if (target !== undefined) {
      doc.setIn(field.path, target);
      changed = true;
      ctx.summary.paths_moved.push({ where, from: path, to: target });
    } else if (envName !== undefined && namesEnvironment(path, envName))
      ctx.summary.warnings.push(
        `${where} is ${JSON.stringify(path)} in another repository, which names the reference environment ` +
          `"${ctx.opts.referenceEnv}": the new cluster would use the reference's; give --path-map ${path}=NEW (path_map in a request)`,
      );
  }
  return changed ? Buffer.from(stringifyDocuments(docs)) : content;
}

/**
 * A mapping for a path the new cluster does not use is a mistake (a typo, another layout): refused, exit 2.
 * Checked after the full pass, which plans every folder of the new cluster (the infra pass plans only its part).
 */
export function checkPathMapUsed(ctx: Context): void {
  if (ctx.opts.pass !== 'full') return;
  const seen = new Set(ctx.summary.paths_moved.map((m) => normalised(m.from)));
  const stray = Object.keys(ctx.opts.pathMap ?? {}).filter((from) => !seen.has(normalised(from)));
  if (stray.length > 0)
    throw new GeneratorInputError(
      `--path-map ${stray[0]}: no Flux Kustomization or ImageUpdateAutomation of the new cluster uses the path ${stray[0]} in another repository`,
    );
}
