/**
 * Two copies of an environment's folders compared as Flux would read them: YAML files by their parsed
 * documents (re-indentation, quoting style, key order and comments are no difference; the order of
 * documents and of list items is), every other file byte for byte. Credentials (SealedSecrets,
 * SOPS-encrypted files, whatever a pass seals anew each time) are never compared by value: only
 * whether each side has them.
 */
import { join } from 'node:path';
import { listFiles } from '../reference';
import { readRepoFile, repoEntry } from '../repo-files';
import { formatForPath, readSopsFile } from '../sops-files';
import { OWNER_FILE } from '../target';
import { isYamlFile, readBodies } from '../yaml-docs';

/** One side of the comparison: a working copy, its environment folders and the files known there as credentials. */
export interface TreeSide {
  root: string;
  folders: string[];
  /** Repository paths the side's own record names as protected output (a pass summary's objects_sealed). */
  credentials?: Set<string>;
}

export interface TreeDifference {
  /** Files both sides have whose content differs. */
  changed: string[];
  /** Files the environment has and the render has not. */
  added: string[];
  /** Files the render has and the environment has not. */
  missing: string[];
  /** Files both sides have that hold credentials: not compared. */
  credentials_not_compared: string[];
}

/** The files of a side's folders (repository paths), markers left out: they record, they are not rendered. */
export function filesOf(side: TreeSide): Set<string> {
  const files = new Set<string>();
  for (const folder of side.folders) {
    if (repoEntry(side.root, folder) !== 'folder') continue;
    for (const rel of listFiles(join(side.root, folder)))
      if (rel.split('/').pop() !== OWNER_FILE) files.add(`${folder}/${rel}`);
  }
  return files;
}

/** Whether a file holds protected output: a SealedSecret document, or SOPS metadata with a MAC in any format sops writes. */
export function holdsCredentials(path: string, text: string): boolean {
  const format = formatForPath(path);
  if (format !== 'ini' && readSopsFile(text, format) !== null) return true;
  if (!isYamlFile(path)) return false;
  return parsedOrUndefined(path, text)?.some((doc) => doc?.kind === 'SealedSecret') ?? false;
}

function parsedOrUndefined(path: string, text: string): readonly any[] | undefined {
  try {
    return readBodies(text, path);
  } catch {
    return undefined; // not YAML after all: compared byte for byte
  }
}

/** A value with every mapping's keys in one order, so two parses compare as text. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  return value;
}

/** Whether two versions of a file say the same: YAML by its documents, anything else (or YAML that does not parse) by its bytes. */
export function sameContent(path: string, ours: Buffer, theirs: Buffer): boolean {
  if (ours.equals(theirs)) return true;
  if (!isYamlFile(path)) return false;
  const a = parsedOrUndefined(path, ours.toString('utf8'));
  const b = parsedOrUndefined(path, theirs.toString('utf8'));
  return a !== undefined && b !== undefined && JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

/** Compares the environment (`ours`) with a render (`theirs`); every list in path order. */
export function compareTrees(ours: TreeSide, theirs: TreeSide): TreeDifference {
  const mine = filesOf(ours);
  const rendered = filesOf(theirs);
  const difference: TreeDifference = { changed: [], added: [], missing: [], credentials_not_compared: [] };
  for (const path of [...new Set([...mine, ...rendered])].sort()) {
    if (!rendered.has(path)) difference.added.push(path);
    else if (!mine.has(path)) difference.missing.push(path);
    else {
      const a = readRepoFile(ours.root, path);
      const b = readRepoFile(theirs.root, path);
      const protectedOutput =
        theirs.credentials?.has(path) ||
        holdsCredentials(path, a.toString('utf8')) ||
        holdsCredentials(path, b.toString('utf8'));
      if (protectedOutput) difference.credentials_not_compared.push(path);
      else if (!sameContent(path, a, b)) difference.changed.push(path);
    }
  }
  return difference;
}
