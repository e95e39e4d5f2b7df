/**
 * An environment as its repository knows it: the folders whose ownership marker names the cluster (its
 * cluster folder and, in the Flux example layout, its apps/<name> overlay), and what the markers
 * recorded. Markers of every version are read; one without the reference commit is named as such.
 */
import { readdirSync } from 'node:fs';
import { join, posix } from 'node:path';
import { GeneratorInputError } from '../errors';
import { checkWorkingCopy, readRepoFile } from '../repo-files';
import { OWNER_FILE } from '../target';
import type { MarkerProvenance } from '../provenance';

/** A marker as read: the owner's fields (ownerOf) and, from version 2, the provenance. */
export type EnvironmentMarker = Partial<MarkerProvenance> & {
  cluster_name: string;
  domain: string;
  region: string;
  reference_env: string;
  owner?: string;
};

/** An environment found in a working copy: its folders (repository-relative) and the record they share. */
export interface Environment {
  folders: string[];
  marker: EnvironmentMarker;
}

/** Every marker file of a working copy (`.git` left out), in path order. */
export function markerFiles(root: string, rel = ''): string[] {
  const found: string[] = [];
  const entries = readdirSync(join(root, rel), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of entries) {
    const child = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory() && !(rel === '' && entry.name === '.git')) found.push(...markerFiles(root, child));
    else if (entry.isFile() && entry.name === OWNER_FILE) found.push(child);
  }
  return found;
}

function parseMarker(root: string, file: string): EnvironmentMarker | undefined {
  let marker: unknown;
  try {
    marker = JSON.parse(readRepoFile(root, file, 'utf8'));
  } catch (e) {
    if (e instanceof GeneratorInputError) throw e;
    throw new GeneratorInputError(`${file} is not a JSON ownership marker; refusing to read the environment`);
  }
  const fields = marker as Record<string, unknown> | null;
  return fields && typeof fields === 'object' && typeof fields.cluster_name === 'string'
    ? (fields as EnvironmentMarker)
    : undefined;
}

/**
 * The environment of `clusterName` in the working copy `root` (checked against the repository limits
 * first, as a pass does). Refused when no marker names it, and when its folders' markers disagree on what
 * made them (a later pass wrote one and not the other): no single commit rendered it then.
 */
export function findEnvironment(root: string, clusterName: string): Environment {
  const own = markedFolders(root).filter((m) => m.marker.cluster_name === clusterName);
  if (own.length === 0)
    throw new GeneratorInputError(`no ownership marker (${OWNER_FILE}) for cluster ${clusterName} in ${root}`);
  const made = (m: EnvironmentMarker) => JSON.stringify([m.reference_commit, m.reference_path, m.inputs]);
  if (new Set(own.map((m) => made(m.marker))).size > 1)
    throw new GeneratorInputError(
      `the markers of cluster ${clusterName} (${own.map((m) => m.folder).join(', ')}) record different reference commits or inputs; refusing to compute drift`,
    );
  return { folders: own.map((m) => m.folder), marker: own[0].marker };
}

/**
 * Every folder of the working copy `root` (checked against the repository limits first, as a pass does) whose
 * ownership marker names a cluster, with its marker, in path order.
 */
export function markedFolders(root: string): Array<{ folder: string; marker: EnvironmentMarker }> {
  checkWorkingCopy(root);
  return markerFiles(root).flatMap((file) => {
    const marker = parseMarker(root, file);
    return marker ? [{ folder: posix.dirname(file), marker }] : [];
  });
}
