import { posix } from 'node:path';
import { KUSTOMIZATION_FILES } from './reference';
import { readBodies } from './yaml-docs';
import { isRepoFolder, readRepoFile, repoPathExists } from './repo-files';

/** What a `.j2` renders to when Flux or kustomize would read the rendered file as a manifest or a kustomization. */
const MANIFEST_TEMPLATE = /\.(ya?ml|json)\.j2$/;
const KUSTOMIZATION_TEMPLATE = new RegExp(`(^|/)(${KUSTOMIZATION_FILES.join('|')})\\.j2$`);
/** A kustomization's entries that kustomize parses as manifests (generators' files are data, and may be templates). */
const MANIFEST_FIELDS = ['resources', 'components', 'bases', 'patchesStrategicMerge'];

/** The folders Flux reads from its entry paths: `exact` ones through a kustomization, `below` ones whole. */
interface ReadFolders {
  exact: Set<string>;
  below: string[];
  /** `.j2` files a kustomization lists as a manifest: kustomize would parse the template itself. */
  listedTemplates: string[];
}

const normalised = (path: string) => posix.normalize(path.replace(/^\.\//, '')).replace(/\/$/, '');
const isLocal = (entry: unknown): entry is string =>
  typeof entry === 'string' && !/^[a-z][a-z0-9+.-]*:\/\//i.test(entry) && !entry.includes('${');

/** The manifest entries of the kustomization in `folder`, or null when the folder has none (Flux generates one). */
function kustomizationEntries(root: string, folder: string): string[] | null {
  const name = KUSTOMIZATION_FILES.find((f) => repoPathExists(root, posix.join(folder, f)));
  if (!name) return null;
  const file = posix.join(folder, name);
  try {
    const body = readBodies(readRepoFile(root, file, 'utf8'), file)[0] ?? {};
    return MANIFEST_FIELDS.flatMap((field) => (Array.isArray(body[field]) ? body[field] : [])).filter(isLocal);
  } catch {
    return []; // a kustomization that does not parse is the build's to report, with kustomize's words
  }
}

/**
 * Follows Flux's reading from `entryPaths` (Kustomizations' spec.path in this repository): a folder with a
 * kustomization is read through its resources and components, one without is read whole (Flux generates a
 * kustomization over every manifest below it). Bounded by the repository's folders: each is visited once.
 */
function foldersFluxReads(root: string, entryPaths: string[]): ReadFolders {
  const read: ReadFolders = { exact: new Set(), below: [], listedTemplates: [] };
  const queue = entryPaths.map(normalised).filter((p) => !p.startsWith('..'));
  while (queue.length > 0) {
    const folder = queue.pop()!;
    if (read.exact.has(folder) || !isRepoFolder(root, folder)) continue;
    read.exact.add(folder);
    const entries = kustomizationEntries(root, folder);
    if (entries === null) {
      read.below.push(folder);
      continue;
    }
    for (const entry of entries) {
      const path = normalised(posix.join(folder, entry));
      if (path.endsWith('.j2')) read.listedTemplates.push(path);
      else if (!path.startsWith('..')) queue.push(path);
    }
  }
  return read;
}

const isReadBy = (read: ReadFolders, file: string) => {
  const folder = posix.dirname(file);
  return read.exact.has(folder) || read.below.some((b) => b === '.' || folder === b || folder.startsWith(`${b}/`));
};

/**
 * The Jinja sources Flux would read unrendered from `entryPaths`: listed by a kustomization, or a manifest or
 * kustomization template with no rendered file beside it in a folder Flux reads. Other `.j2` files (a Talos
 * configuration template, a generator's data file, anything in a folder no Kustomization applies) are not
 * what Flux applies, and are carried like any other file.
 */
export function unrenderedTemplates(root: string, files: readonly string[], entryPaths: string[]): string[] {
  const read = foldersFluxReads(root, entryPaths);
  const unrendered = files.filter(
    (f) =>
      (MANIFEST_TEMPLATE.test(f) || KUSTOMIZATION_TEMPLATE.test(f)) &&
      isReadBy(read, f) &&
      !repoPathExists(root, f.slice(0, -'.j2'.length)),
  );
  return [...new Set([...read.listedTemplates, ...unrendered])].sort();
}
