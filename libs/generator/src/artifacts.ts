/**
 * Flux 2.7's ArtifactGenerator (source.extensions.fluxcd.io): it copies folders of a source
 * (the cluster's GitRepository) into ExternalArtifacts, and Kustomizations apply paths inside
 * those artifacts. The generator reads the copy rules to know which repository folder a
 * Kustomization applies, and reproduces the copy to build exactly what Flux will build.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { GeneratorInputError } from './errors';
import { normalizePath } from './flux-sync';

export const isArtifactGenerator = (b: any) =>
  b?.kind === 'ArtifactGenerator' && /^source\.extensions\.fluxcd\.io\//.test(String(b?.apiVersion));

export interface CopyRule {
  /** Source alias (`monorepo` in `@monorepo/apps/**`). */
  alias: string;
  /** Repository-relative folder or file the rule copies from (without the glob). */
  from: string;
  /** `**`: everything below `from`; `*.ext`-style: matching files directly in `from`; none: the file or folder itself. */
  glob: string | undefined;
  /** Artifact-relative destination ('' is the artifact root). */
  to: string;
  /** The destination names a folder (ends with /). */
  toFolder: boolean;
}

export interface GeneratedArtifact {
  name: string;
  rules: CopyRule[];
}

const SOURCE_REF = /^@([a-zA-Z0-9_-]+)\/(.*)$/;
const ARTIFACT_REF = /^@artifact\/(.*)$/;

function parseRule(entry: any, where: string): CopyRule {
  const from = SOURCE_REF.exec(String(entry?.from ?? ''));
  const to = ARTIFACT_REF.exec(String(entry?.to ?? ''));
  if (!from || !to)
    throw new GeneratorInputError(
      `${where}: copy ${JSON.stringify(entry)} is not "@<source>/<path>" to "@artifact/<path>"`,
    );
  const parts = from[2].split('/').filter(Boolean);
  const last = parts[parts.length - 1] ?? '';
  const glob = last.includes('*') ? last : undefined;
  if (glob !== undefined && glob !== '**' && !/^[^*/]*\*[^*/]*$/.test(glob)) {
    throw new GeneratorInputError(
      `${where}: copy from ${entry.from}: the generator reproduces "<dir>/**", "<dir>/*.<ext>" and plain paths`,
    );
  }
  if (parts.slice(0, -1).some((p) => p.includes('*')))
    throw new GeneratorInputError(`${where}: copy from ${entry.from}: only the last part may be a glob`);
  return {
    alias: from[1],
    from: (glob ? parts.slice(0, -1) : parts).join('/'),
    glob,
    to: normalizePath(to[1] || '.').replace(/^\.$/, ''),
    toFolder: to[1] === '' || to[1].endsWith('/'),
  };
}

/** The artifacts an ArtifactGenerator produces from the given source aliases (the repository's own). */
export function generatedArtifacts(body: any, where: string): GeneratedArtifact[] {
  return (body.spec?.artifacts ?? []).map((a: any) => ({
    name: String(a?.name),
    rules: (a?.copy ?? []).map((c: any) => parseRule(c, `${where} artifact ${a?.name}`)),
  }));
}

/** The aliases of an ArtifactGenerator that name GitRepositories (whose paths are repository paths). */
export function gitSourceAliases(body: any): Map<string, string> {
  return new Map(
    (body.spec?.sources ?? [])
      .filter((s: any) => s?.kind === 'GitRepository')
      .map((s: any) => [String(s.alias), String(s.name)]),
  );
}

/**
 * The repository folder an artifact path comes from: the rule with the longest destination
 * that holds it (`./staging` in apps <- apps/staging). Undefined when no recursive rule covers it.
 */
export function repositoryPathOf(artifact: GeneratedArtifact, path: string): string | undefined {
  const norm = normalizePath(path).replace(/^\.$/, '');
  const covering = artifact.rules
    .filter((r) => r.glob === '**' && (r.to === '' || norm === r.to || norm.startsWith(r.to + '/')))
    .sort((a, b) => b.to.length - a.to.length)[0];
  if (!covering) return undefined;
  const rest = covering.to === '' ? norm : norm.slice(covering.to.length).replace(/^\//, '');
  return posix.join(covering.from, rest).replace(/\/$/, '') || '.';
}

/** Whether some copy rule writes into (or below) `path` of the artifact. */
export function artifactHolds(artifact: GeneratedArtifact, path: string): boolean {
  const norm = normalizePath(path).replace(/^\.$/, '');
  return artifact.rules.some(
    (r) => r.to === '' || norm === '' || norm === r.to || norm.startsWith(r.to + '/') || r.to.startsWith(norm + '/'),
  );
}

/**
 * Writes the artifact into `into` as Flux's generator would, reading repository paths through
 * `resolve` (which maps folders being written to their staging copies).
 */
export function materialise(artifact: GeneratedArtifact, resolve: (repoPath: string) => string, into: string): void {
  mkdirSync(into, { recursive: true });
  for (const rule of artifact.rules) {
    const source = resolve(rule.from);
    if (!existsSync(source))
      throw new GeneratorInputError(`artifact ${artifact.name}: ${rule.from} does not exist in the repository`);
    const target = join(into, rule.to);
    if (rule.glob === '**') {
      cpSync(source, target, { recursive: true, filter: (src) => !/(^|\/)\.[^/]*$/.test(src.slice(source.length)) });
    } else if (rule.glob !== undefined) {
      const pattern = new RegExp(`^${rule.glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace('*', '[^/]*')}$`);
      mkdirSync(target, { recursive: true });
      for (const name of readdirSync(source).filter((n) => pattern.test(n) && statSync(join(source, n)).isFile()))
        cpSync(join(source, name), join(target, name));
    } else {
      const destination = rule.toFolder ? join(target, posix.basename(rule.from)) : target;
      mkdirSync(dirname(destination), { recursive: true });
      cpSync(source, destination, { recursive: true });
    }
  }
}
