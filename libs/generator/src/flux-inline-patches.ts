/**
 * A Flux Kustomization's inline `spec.patches` applied to the Flux Kustomizations its folder declares,
 * as kustomize-controller applies them before it reconciles those: the home-ops layout gives every
 * per-app Kustomization its `postBuild.substituteFrom` (cluster-settings, cluster-secrets) and its
 * `decryption` through one patch in `cluster-apps`, so a child is read with the patch, not as written.
 */
import { forEachInlinePatch } from './patches';

/** kustomize's label selector (`key`, `!key`, `key=v`, `key==v`, `key!=v`, `key in (a,b)`, `key notin (a,b)`), comma-separated. */
export function matchesLabelSelector(selector: string, labels: Record<string, string>): boolean {
  return splitRequirements(selector).every((req) => matchesRequirement(req.trim(), labels));
}

/** Splits on commas outside parentheses. */
function splitRequirements(selector: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of selector) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(current);
      current = '';
    } else current += ch;
  }
  if (current.trim() !== '') out.push(current);
  return out;
}

function matchesRequirement(req: string, labels: Record<string, string>): boolean {
  const set = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(req);
  if (set) {
    const values = set[3].split(',').map((v) => v.trim());
    const has = set[1] in labels && values.includes(labels[set[1]]);
    return set[2] === 'in' ? has : !has;
  }
  const equality = /^([^!=\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(req);
  if (equality) {
    const equal = labels[equality[1]] === equality[3];
    return equality[2] === '!=' ? !equal : equal;
  }
  if (req.startsWith('!')) return !(req.slice(1) in labels);
  return req in labels;
}

/** Whether a patch target (`group`, `version`, `kind`, `name`, `namespace`, `labelSelector`, `annotationSelector`) selects the object. */
export function targetSelects(target: any, body: any): boolean {
  if (!target || typeof target !== 'object') return false;
  const [group, version] = String(body.apiVersion ?? '').includes('/')
    ? String(body.apiVersion).split('/')
    : ['', String(body.apiVersion ?? '')];
  const metadata = body.metadata ?? {};
  // kustomize matches name, namespace and kind as anchored regular expressions.
  const regex = (pattern: unknown, value: unknown) =>
    pattern === undefined || new RegExp(`^(?:${String(pattern)})$`).test(String(value ?? ''));
  return (
    (target.group === undefined || target.group === group) &&
    (target.version === undefined || target.version === version) &&
    regex(target.kind, body.kind) &&
    regex(target.name, metadata.name) &&
    regex(target.namespace, metadata.namespace) &&
    (target.labelSelector === undefined || matchesLabelSelector(String(target.labelSelector), metadata.labels ?? {})) &&
    (target.annotationSelector === undefined ||
      matchesLabelSelector(String(target.annotationSelector), metadata.annotations ?? {}))
  );
}

/** A strategic merge for a custom resource: maps merge key by key, lists and scalars are replaced, `null` deletes. */
function strategicMerge(base: any, patch: any): any {
  if (!isMap(base) || !isMap(patch)) return patch;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = strategicMerge(base[key], value);
  }
  return out;
}

const isMap = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `child` as the parent Kustomization's inline strategic-merge patches leave it. A JSON6902 patch of a
 * Flux Kustomization is not read here: `unread` is called with its target so it can be reported.
 */
export function withParentPatches(parent: any, child: any, unread: (target: unknown) => void = () => {}): any {
  let body = child;
  forEachInlinePatch(parent, (patch, target) => {
    const selected = target ? targetSelects(target, body) : sameObject(patch, body);
    if (!selected) return;
    if (Array.isArray(patch)) return unread(target);
    if (!isMap(patch)) return;
    // The patch's name and namespace only say what it is (a placeholder when a target selects).
    const { apiVersion: _a, kind: _k, metadata, ...spec } = patch;
    const { name: _n, namespace: _ns, ...labelsAndAnnotations } = isMap(metadata) ? metadata : {};
    body = strategicMerge(body, { ...spec, metadata: labelsAndAnnotations });
  });
  return body;
}

/** A patch without a target applies to the object of its own kind and name. */
const sameObject = (patch: any, body: any) =>
  isMap(patch) && patch.kind === body.kind && patch.metadata?.name === body.metadata?.name;
