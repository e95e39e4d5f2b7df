import { createHash } from 'node:crypto';
import { boundFromHeapLimit, LruByBytes } from './lru';
import { Document, isMap, isScalar, isSeq, parseAllDocuments, YAMLMap } from 'yaml';

export type YamlPath = ReadonlyArray<string | number>;

/** A kept parse: the documents, and their plain values once asked for (frozen: shared). */
interface KeptParse {
  docs: Document[];
  bodies?: readonly unknown[];
}

/**
 * Parses kept by the sha256 of the file's bytes, least recently used first. Every pass reads the same
 * reference files again (up to three times: recognising the environment model, then reading it), and
 * every run of a service reads the same reference: profiled under load, parsing and cloning was 40%
 * of a worker's time. The key is the digest, not the text (the text as a key kept every file's text
 * beside its parse); the bound is the memory the parses take, so it stays flat whatever the
 * reference's size: a parsed document (the yaml library's nodes with their source ranges) takes
 * about 27 times its text on the heap (docs/benchmarks.md), so 64 MiB keeps a large reference's
 * worth per thread; in a smaller heap (a pod's memory limit), a 16th of the heap's limit.
 */
const PARSE_HEAP_PER_TEXT_BYTE = 30;
const kept = new LruByBytes<KeptParse>(boundFromHeapLimit(1 / 16, 64 * 1024 * 1024));

/** The key of a file's parse: the sha256 of its bytes. */
export const contentDigest = (text: string | Buffer) => createHash('sha256').update(text).digest('base64');

function keptParse(text: string, file: string): KeptParse {
  const key = contentDigest(text);
  let entry = kept.get(key);
  if (!entry) {
    entry = { docs: parseFresh(text, file) };
    kept.set(key, entry, Buffer.byteLength(text) * PARSE_HEAP_PER_TEXT_BYTE);
  }
  return entry;
}

/** Parses every document of a (possibly multi-document) YAML file; empty documents are dropped. Copies: callers may edit them. */
export function parseDocuments(text: string, file: string): Document[] {
  return keptParse(text, file).docs.map((d) => d.clone());
}

/**
 * The same documents without a copy, for callers that only read them (toJS, get, toString): most of
 * a pass reads the reference and edits a few documents, and a deep copy of every one cost as much
 * as a parse. Never edit what this returns: the next caller of the same bytes gets it too.
 */
export function sharedDocuments(text: string, file: string): readonly Document[] {
  return keptParse(text, file).docs;
}

/**
 * Every document's plain value (toJS), computed once per content and frozen, so that a caller
 * editing one fails loudly instead of changing what the next caller of the same bytes reads.
 * A caller that needs to change a value copies it (structuredClone) where it does.
 */
export function readBodies(text: string, file: string): readonly any[] {
  const entry = keptParse(text, file);
  entry.bodies ??= entry.docs.map((d) => deepFreeze(d.toJS()));
  return entry.bodies;
}

function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  // Only plain objects and arrays: a typed array (a !!binary value) cannot be frozen.
  if (!Array.isArray(value) && Object.getPrototypeOf(value) !== Object.prototype) return value;
  for (const child of Object.values(value)) deepFreeze(child);
  return Object.freeze(value);
}

/** Parses a YAML stream without keeping it (kustomize's output: read once, often large). */
export function parseFresh(text: string, file: string): Document[] {
  // logLevel error: the library's warnings (a Go template `{{ .KEY }}` read as a map key) went to the CLI's stderr
  // as Node process warnings, unrelated to anything the user can act on; errors still refuse the file.
  const docs = parseAllDocuments(text, { logLevel: 'error' });
  if (!Array.isArray(docs)) throw new Error(`${file}: not a YAML stream`);
  for (const d of docs) {
    if (d.errors.length > 0) throw new Error(`${file}: ${d.errors[0].message}`);
  }
  return docs.filter((d) => d.contents !== null);
}

/** Files the generator reads as manifests (kustomize also accepts a file named Kustomization). */
export const isYamlFile = (f: string) => /\.ya?ml$/.test(f) || f === 'Kustomization';

export function stringifyDocuments(docs: Document[]): string {
  return docs
    .map((d, i) => {
      const text = d.toString({ lineWidth: 0 });
      return i === 0 || text.startsWith('---') ? text : '---\n' + text;
    })
    .join('');
}

export interface ScalarContext {
  path: YamlPath;
  key: string | number;
  /** The map holding this scalar (for rules that look at a sibling, such as an env entry's name). */
  parent: YAMLMap | null;
}

/**
 * Visits every string scalar and lets `rewrite` replace it in place. Editing scalars through the
 * document keeps comments, key order and quoting of everything else byte for byte.
 * Returns whether anything changed.
 */
export function rewriteStrings(
  doc: Document,
  rewrite: (value: string, ctx: ScalarContext) => string | undefined,
): boolean {
  let changed = false;
  const walk = (node: unknown, path: YamlPath): void => {
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        visitChild(pair.value, [...path, key], key, node);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => visitChild(item, [...path, i], i, null));
    }
  };
  const visitChild = (child: unknown, path: YamlPath, key: string | number, parent: YAMLMap | null) => {
    if (isScalar(child)) {
      if (typeof child.value !== 'string') return;
      const next = rewrite(child.value, { path, key, parent });
      if (next !== undefined && next !== child.value) {
        child.value = next;
        changed = true;
      }
    } else {
      walk(child, path);
    }
  };
  walk(doc.contents, []);
  return changed;
}

/** Whether any string value anywhere in a plain value is one of `values`. */
export function holdsString(value: unknown, values: readonly string[]): boolean {
  if (typeof value === 'string') return values.includes(value);
  if (value === null || typeof value !== 'object') return false;
  return Object.values(value).some((child) => holdsString(child, values));
}

export function startsWith(path: YamlPath, prefix: YamlPath): boolean {
  return prefix.every((p, i) => path[i] === p);
}
