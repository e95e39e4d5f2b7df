/**
 * Kustomize patches as data: reading the inline patches of a (Flux or kustomize) Kustomization,
 * running object rules over a JSON6902 or strategic-merge patch, and writing the difference
 * between two bodies as JSON6902 operations.
 */
import { Document, parse } from 'yaml';
import { HostOccurrence, hostsIn } from './hosts';
import type { ReferenceObject } from './reference';
import type { YamlPath } from './yaml-docs';

export type PatchTarget = Record<string, string>;
export type ReplaceOperation = { op: 'replace'; path: string; value: unknown };

/** A JSON pointer (`/spec/rules/0/host`) as a path of keys and indexes. */
export function pointerPath(pointer: string): YamlPath {
  return pointer
    .split('/')
    .slice(1)
    .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'))
    .map((p) => (/^(0|[1-9][0-9]*)$/.test(p) ? Number(p) : p));
}

/** A path of keys and indexes as a JSON pointer. */
export function pointerOf(path: YamlPath): string {
  return '/' + path.map((p) => String(p).replaceAll('~', '~0').replaceAll('/', '~1')).join('/');
}

/** Calls `visit` with each inline patch (`patches[].patch`, parsed) of a Flux or kustomize Kustomization, and its target. */
export function forEachInlinePatch(body: any, visit: (patch: unknown, target: any) => void) {
  const patches =
    body?.spec?.patches ?? (body?.kind === 'Kustomization' && !body?.spec ? body.patches : undefined) ?? [];
  for (const p of patches) if (typeof p?.patch === 'string') visit(parse(p.patch), p.target);
}

/** An object of the patch target's kind carrying `value` at `path`: object rules then apply to one JSON6902 value. */
function carrier(target: any, path: YamlPath, value: unknown): Document {
  const doc = new Document({
    apiVersion: `${target?.group ? target.group + '/' : ''}${target?.version ?? 'v1'}`,
    kind: target?.kind,
    metadata: { name: target?.name },
  });
  doc.setIn(path, doc.createNode(value));
  return doc;
}

const valueAt = (body: any, path: YamlPath) => path.reduce((node, key) => node?.[key], body);

/** Hosts a patch sets (JSON6902 values or a strategic merge), read as if on its target's kind. */
export function hostsInPatch(patch: unknown, target: any, where: string): HostOccurrence[] {
  if (Array.isArray(patch)) {
    return patch.flatMap((op: any) =>
      typeof op?.path === 'string' && op.value !== undefined
        ? hostsIn(carrier(target, pointerPath(op.path), op.value).toJS(), where)
        : [],
    );
  }
  return patch && typeof patch === 'object' ? hostsIn({ kind: target?.kind, ...(patch as object) }, where) : [];
}

/**
 * Runs object rules (`rewrite` edits a document in place and says whether it changed anything) over
 * a patch of `target`: each JSON6902 value at its path, or a strategic merge as a whole. Returns the
 * rewritten patch, or undefined when nothing changes.
 */
export function rewritePatch(patch: unknown, target: any, rewrite: (doc: Document) => boolean): unknown {
  if (Array.isArray(patch)) {
    let changed = false;
    const ops = patch.map((op: any) => {
      if (typeof op?.path !== 'string' || op.value === undefined) return op;
      const path = pointerPath(op.path);
      const doc = carrier(target, path, op.value);
      if (!rewrite(doc)) return op;
      changed = true;
      return { ...op, value: valueAt(doc.toJS(), path) };
    });
    return changed ? ops : undefined;
  }
  if (!patch || typeof patch !== 'object') return undefined;
  const doc = new Document({ kind: target?.kind, ...(patch as object) });
  if (!rewrite(doc)) return undefined;
  const out = doc.toJS();
  if (!(patch as any).kind) delete out.kind;
  return out;
}

/** Scalars that differ between two bodies of the same shape, as JSON6902 replace operations. */
export function replacements(before: any, after: any, path: YamlPath = []): ReplaceOperation[] {
  if (before === after) return [];
  if (before && after && typeof before === 'object' && typeof after === 'object') {
    return Object.keys(after).flatMap((key) =>
      replacements(before[key], after[key], [...path, Array.isArray(after) ? Number(key) : key]),
    );
  }
  return [{ op: 'replace', path: pointerOf(path), value: after }];
}

/** The patch target that selects exactly this object (group, version, kind, name and, where it has one, namespace). */
export function patchTarget(o: ReferenceObject): PatchTarget {
  const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
  return {
    ...(group ? { group } : {}),
    version,
    kind: o.kind,
    name: o.name,
    ...(o.targetNamespace ? { namespace: o.targetNamespace } : {}),
  };
}
