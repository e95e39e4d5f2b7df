/**
 * The repository's `.sops.yaml`: `sops` picks the first creation rule whose `path_regex` matches a
 * file's path (relative to the folder of `.sops.yaml`, the repository root here), so the new
 * cluster's rule goes first and names exactly the folders the pass encrypts Secrets in, wherever
 * the layout puts them (clusters/<name>/..., apps/<name>/..., infrastructure/configs/<name>/...).
 * Rules of other clusters and of people are kept as they are, comments included.
 */
import { posix } from 'node:path';
import { Document, isMap, isNode, isScalar, isSeq, YAMLSeq } from 'yaml';
import { FLUX_ENCRYPTED_REGEX } from '#libs/sealing/sops';
import { GeneratorInputError } from './errors';
import { parseDocuments } from './yaml-docs';

export const SOPS_CONFIG = '.sops.yaml';

export interface SopsCreationRule {
  path_regex: string;
  /** Absent for whole files (a secretGenerator's dotenv, yaml, json or binary sources): sops encrypts every value. */
  encrypted_regex?: string;
  age: string;
}

/** Go's RE2 and JavaScript agree on these escapes. */
export const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const FILE_IN_FOLDER = '/[^/]+\\.ya?ml$';
/** The form the scaffolder wrote before (the whole cluster folder), still recognised as the cluster's own. */
const ANY_BELOW = '/.*\\.ya?ml$';

/** A path_regex matching the YAML files directly in the folders of `files` (repository-relative), anchored and escaped. */
export function pathRegexFor(files: string[]): string {
  const folders = [...new Set(files.map((f) => posix.dirname(f)))].sort().map(escapeRegex);
  return `^${folders.length === 1 ? folders[0] : `(?:${folders.join('|')})`}${FILE_IN_FOLDER}`;
}

/** The cluster's creation rule for the files it encrypts (none when it encrypts nothing). */
export function clusterRule(files: string[], recipients: string[]): SopsCreationRule | undefined {
  if (files.length === 0) return undefined;
  return { path_regex: pathRegexFor(files), encrypted_regex: FLUX_ENCRYPTED_REGEX, age: recipients.join(',') };
}

/** A literal path, escaped as escapeRegex does. */
const LITERAL = /^(?:[^.*+?^${}()|[\]\\]|\\[.*+?^${}()|[\]\\])+$/;

/** A path_regex matching exactly the given files (repository-relative), anchored and escaped. */
export function pathRegexForFiles(files: string[]): string {
  const escaped = [...new Set(files)].sort().map(escapeRegex);
  return `^${escaped.length === 1 ? escaped[0] : `(?:${escaped.join('|')})`}$`;
}

/**
 * The cluster's creation rules: first one for the whole files its secretGenerators read (every value
 * encrypted, as they are written), then one for the folders of its Secret manifests (only `data`
 * and `stringData`, as Flux decrypts them). `sops` takes the first rule that matches a path.
 */
export function clusterRules(manifests: string[], sources: string[], recipients: string[]): SopsCreationRule[] {
  const age = recipients.join(',');
  return [
    ...(sources.length > 0 ? [{ path_regex: pathRegexForFiles(sources), age }] : []),
    ...[clusterRule(manifests, recipients)].filter((r): r is SopsCreationRule => r !== undefined),
  ];
}

/**
 * The folders a path_regex of the scaffolder's shape names (this one's or the older whole-folder
 * one), unescaped; undefined for any other regex (a person's rule: never taken as the scaffolder's).
 */
export function foldersOf(pathRegex: unknown): string[] | undefined {
  if (typeof pathRegex !== 'string' || !pathRegex.startsWith('^')) return undefined;
  const files = filesOf(pathRegex);
  if (files) return [...new Set(files.map((f) => posix.dirname(f)))];
  const suffix = [FILE_IN_FOLDER, ANY_BELOW].find((s) => pathRegex.endsWith(s));
  if (!suffix) return undefined;
  let body = pathRegex.slice(1, -suffix.length);
  if (body.startsWith('(?:') && body.endsWith(')')) body = body.slice(3, -1);
  const folders = body.split('|');
  if (!folders.every((f) => LITERAL.test(f))) return undefined;
  return folders.map((f) => f.replace(/\\(.)/g, '$1'));
}

/** The files a path_regex of the scaffolder's whole-file shape names (`^(?:a\.env|b/c\.json)$`), unescaped. */
function filesOf(pathRegex: string): string[] | undefined {
  if (!pathRegex.endsWith('$') || pathRegex.endsWith('\\$')) return undefined;
  let body = pathRegex.slice(1, -1);
  if (body.startsWith('(?:') && body.endsWith(')')) body = body.slice(3, -1);
  const files = body.split('|');
  if (!files.every((f) => LITERAL.test(f) && f.includes('/'))) return undefined;
  return files.map((f) => f.replace(/\\(.)/g, '$1'));
}

/** The creation_rules list of a .sops.yaml (a new one when it has none). */
function creationRules(doc: Document): YAMLSeq {
  const rules = doc.get('creation_rules', true);
  if (rules === undefined || (isScalar(rules) && rules.value === null)) return new YAMLSeq();
  if (!isSeq(rules)) throw new GeneratorInputError(`${SOPS_CONFIG}: creation_rules must be a list`);
  return rules;
}

/**
 * `.sops.yaml` with the cluster's rule first and every earlier rule of the cluster's (one naming
 * only folders `owns` accepts) removed; the other rules stay in their order. Null when the text
 * needs no change (also when there is no file and no rule to write).
 */
export function withClusterRule(
  text: string | null,
  rule: SopsCreationRule | SopsCreationRule[] | undefined,
  owns: (folder: string) => boolean,
): string | null {
  const ours = rule === undefined ? [] : Array.isArray(rule) ? rule : [rule];
  if (text === null && ours.length === 0) return null;
  const doc = (text === null ? undefined : parseDocuments(text, SOPS_CONFIG)[0]) ?? new Document({});
  if (!isMap(doc.contents)) throw new GeneratorInputError(`${SOPS_CONFIG} must be a mapping with creation_rules`);
  const rules = creationRules(doc);
  const isOurs = (item: unknown) => {
    const folders = foldersOf(isMap(item) ? item.get('path_regex') : undefined);
    return folders !== undefined && folders.every(owns);
  };
  const kept = rules.items.filter((item) => !isOurs(item));
  const next = [...ours.map((r) => doc.createNode(r)), ...kept];
  const plain = (items: unknown[]) => JSON.stringify(items.map((n) => (isNode(n) ? n.toJSON() : n)));
  // Rewritten only when a rule changes: a second run leaves the file's bytes (and a person's layout) alone.
  if (text !== null && plain(next) === plain(rules.items)) return null;
  rules.items = next;
  doc.set('creation_rules', rules);
  return doc.toString({ lineWidth: 0 });
}
