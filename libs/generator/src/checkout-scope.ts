/**
 * Which folders of a target repository a pass needs on disk. A fleet repository holds one folder per
 * cluster scaffolded into it (thousands of files at a hundred clusters); a pass reads and writes its
 * own cluster's folders, the reference environment's, the shared folders and the files at the top,
 * never another cluster's. Everything but the other clusters' folders is checked out (cone mode), so
 * whatever the layout reads besides them (shared bases, .sops.yaml, kustomizations above the cluster
 * folders) is there as in a full checkout.
 */
import { posix, resolve } from 'node:path';
import type { GenerateOptions } from './context';
import { canonicalReferenceEnv, referenceEnvDir } from './environment-folder';
import { SHIPPED_TEMPLATE } from './generate';
import { OWNER_FILE } from './target';

/** What decides a pass's folders: the same for both passes of a run. */
export type CheckoutScopeOptions = Pick<GenerateOptions, 'templateDir' | 'referenceEnv' | 'clusterName' | 'pathMap'>;

/**
 * The folders (cone mode) a pass of `opts` checks out of a branch holding `files` (repository-relative
 * paths), or null for the whole tree: when nothing is left out, or when the pass moves paths into other
 * repositories (path_map), whose handling is not narrowed here.
 */
export function passCheckoutFolders(opts: CheckoutScopeOptions, files: string[]): string[] | null {
  if (Object.keys(opts.pathMap ?? {}).length > 0) return null;
  const root = resolve(opts.templateDir ?? SHIPPED_TEMPLATE);
  const envDir = referenceEnvDir(root, canonicalReferenceEnv(opts.referenceEnv ?? 'development'));
  const others = otherClustersFolders(files, opts.clusterName, envDir);
  if (others.length === 0) return null;
  return complement(files, new Set(others), opts.clusterName);
}

/** True when `a` is `b`, lies inside it or holds it. */
const related = (a: string, b: string) => a === b || a.startsWith(b + '/') || b.startsWith(a + '/');

/**
 * The folders the scaffolder marked as another cluster's: a marker, no path part naming this cluster
 * or the reference environment (the scaffolder names a cluster's folders after it: clusters/<name>,
 * apps/<name>), and nothing on the way to the reference environment or to a folder kept.
 */
function otherClustersFolders(files: string[], clusterName: string, envDir: string): string[] {
  const marked = files.filter((f) => posix.basename(f) === OWNER_FILE).map((f) => posix.dirname(f));
  const envName = posix.basename(envDir);
  const names = (dir: string) => dir.split('/').some((part) => part === clusterName || part === envName);
  const kept = [envDir, ...marked.filter(names)];
  return marked.filter((dir) => dir !== '.' && !names(dir) && !kept.some((k) => related(dir, k)));
}

/**
 * Cone-mode folders covering every file but those in `left`: a folder with nothing left out below it
 * whole, one with something left out walked into. A folder walked into keeps its own files only when a
 * folder below it is in the cone, so each gets the place this cluster's folder would take beside the
 * ones left out (absent until the pass writes it).
 */
function complement(files: string[], left: Set<string>, clusterName: string): string[] {
  const children = new Map<string, Set<string>>();
  for (const file of files) {
    const parts = file.split('/');
    for (let i = 1; i < parts.length; i++) {
      const parent = parts.slice(0, i - 1).join('/');
      if (!children.has(parent)) children.set(parent, new Set());
      children.get(parent)!.add(parts.slice(0, i).join('/'));
    }
  }
  const holdsLeft = (dir: string) => [...left].some((l) => l.startsWith(dir + '/'));
  const cone: string[] = [];
  const walk = (dir: string) => {
    for (const child of children.get(dir) ?? []) {
      if (left.has(child)) continue;
      if (holdsLeft(child)) walk(child);
      else cone.push(child);
    }
    if (dir !== '') cone.push(`${dir}/${clusterName}`);
  };
  walk('');
  return [...new Set(cone)].sort();
}
