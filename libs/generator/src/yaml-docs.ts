import { Document, isMap, isScalar, isSeq, parseAllDocuments, YAMLMap } from 'yaml';

export type YamlPath = ReadonlyArray<string | number>;

/** Parsed files by content, least recently used first: every pass reads the same reference files again (see parseDocuments). */
const parsedByContent = new Map<string, Document[]>();
const PARSED_FILES_KEPT = 2000;

/**
 * Parses every document of a (possibly multi-document) YAML file; empty documents are dropped.
 * Every pass parses the reference's files again, up to three times (recognising the environment
 * model, then reading it): profiled under load, that was a third of a worker's CPU. A file's parse is
 * kept by its exact text and handed out as a deep clone, so callers may edit what they get.
 */
export function parseDocuments(text: string, file: string): Document[] {
  const key = `${file}\0${text}`;
  let docs = parsedByContent.get(key);
  if (docs) parsedByContent.delete(key);
  else docs = parseFresh(text, file);
  parsedByContent.set(key, docs);
  if (parsedByContent.size > PARSED_FILES_KEPT) parsedByContent.delete(parsedByContent.keys().next().value!);
  return docs.map((d) => d.clone());
}

/** Parses a YAML stream without keeping it (kustomize's output: read once, often large). */
export function parseFresh(text: string, file: string): Document[] {
  const docs = parseAllDocuments(text);
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

export function startsWith(path: YamlPath, prefix: YamlPath): boolean {
  return prefix.every((p, i) => path[i] === p);
}
