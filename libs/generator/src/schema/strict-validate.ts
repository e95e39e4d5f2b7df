/**
 * Strict validation, as `kubeconform -strict`: the packaged schemas leave objects open (no
 * additionalProperties), so a misspelt field (`dependOn:`, `secretref:`) would pass. The validator
 * runs on a view of the object that records which properties it looks up at every node: a node
 * whose properties the schema names was looked up property by property, and any own key it did not
 * look up is unknown. A node the schema treats as a map (labels, data, Helm values) is enumerated
 * or never looked into, and stays open.
 */
import type { CompiledValidator, SchemaError } from './schema-index';

export interface SchemaProblem {
  /** Path segments from the object's root (array indexes as numbers). */
  path: Array<string | number>;
  /** What is wrong, without the value except where it is a schema word (an enum member, a type). */
  message: string;
  /** The value at the path, for callers deciding whether it is a variable Flux fills in later. */
  value: unknown;
}

interface NodeVisit {
  node: object;
  path: Array<string | number>;
  lookedUp: Set<string>;
  enumerated: boolean;
}

/** Views of every node of one object, each recording what the validator does with its node. */
class RecordingView {
  readonly visits = new Map<object, NodeVisit>();
  private readonly proxies = new Map<object, object>();

  of(node: unknown, path: Array<string | number>): unknown {
    if (node === null || typeof node !== 'object') return node;
    const known = this.proxies.get(node);
    if (known) return known;
    const visit: NodeVisit = { node, path, lookedUp: new Set(), enumerated: false };
    this.visits.set(node, visit);
    const child = (key: string | symbol) =>
      Array.isArray(node) && typeof key === 'string' && /^\d+$/.test(key) ? Number(key) : key;
    const proxy = new Proxy(node, {
      get: (target, key) => {
        if (typeof key !== 'string') return Reflect.get(target, key);
        visit.lookedUp.add(key);
        return Object.hasOwn(target, key)
          ? this.of((target as any)[key], [...path, child(key) as string | number])
          : Reflect.get(target, key);
      },
      has: (target, key) => {
        if (typeof key === 'string') visit.lookedUp.add(key);
        return Reflect.has(target, key);
      },
      getOwnPropertyDescriptor: (target, key) => {
        if (typeof key === 'string') visit.lookedUp.add(key);
        return Reflect.getOwnPropertyDescriptor(target, key);
      },
      ownKeys: (target) => {
        visit.enumerated = true;
        return Reflect.ownKeys(target);
      },
    });
    this.proxies.set(node, proxy);
    return proxy;
  }
}

/** A rule on a field the schema declares (not on map entries or free-form values): a message when it is broken. */
export type FieldRule = (key: string, value: unknown) => string | null;

/**
 * What to say of a key the validator never looked up, where the packaged schema lost a declared field
 * (dropped-fields.ts): undefined for an unknown field, null for a declared one of the right type, else why not.
 */
export type DroppedFieldRule = (
  path: ReadonlyArray<string | number>,
  key: string,
  value: unknown,
) => string | null | undefined;

/** Every schema error and every unknown field of `body` under `validate`, and what `fieldRule` says of every declared field. */
export function strictValidate(
  validate: CompiledValidator,
  body: object,
  fieldRule?: FieldRule,
  droppedField?: DroppedFieldRule,
): SchemaProblem[] {
  const view = new RecordingView();
  const valid = validate(view.of(body, []));
  const problems = valid ? [] : (validate.errors ?? []).map((e) => problemOf(e, body));
  for (const visit of view.visits.values()) {
    if (Array.isArray(visit.node) || visit.enumerated || visit.lookedUp.size === 0) continue;
    for (const [key, value] of Object.entries(visit.node)) {
      const broken = visit.lookedUp.has(key)
        ? fieldRule?.(key, value)
        : notLookedUp(visit.path, key, value, droppedField);
      if (broken) problems.push({ path: [...visit.path, key], message: broken, value });
    }
  }
  return problems;
}

/** A key the validator did not look up: unknown, unless the packaged schema lost it (then its type is checked). */
function notLookedUp(path: Array<string | number>, key: string, value: unknown, droppedField?: DroppedFieldRule) {
  const said = droppedField?.(path, key, value);
  return said === undefined ? 'unknown field' : said;
}

/** Reads a JSON pointer (ajv's instancePath) as path segments of `body`. */
export function pointerPath(body: unknown, pointer: string): Array<string | number> {
  const segments =
    pointer === ''
      ? []
      : pointer
          .slice(1)
          .split('/')
          .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
  let node: any = body;
  return segments.map((s) => {
    const segment = Array.isArray(node) ? Number(s) : s;
    node = node?.[segment];
    return segment;
  });
}

export const valueAt = (body: unknown, path: Array<string | number>): unknown =>
  path.reduce((node: any, s) => node?.[s], body);

function problemOf(error: SchemaError, body: object): SchemaProblem {
  const path = pointerPath(body, error.instancePath);
  const value = valueAt(body, path);
  const p = error.params;
  switch (error.keyword) {
    case 'required':
      return { path: [...path, p.missingProperty], message: 'is required', value: undefined };
    case 'enum':
      return {
        path,
        message: `must be one of ${p.allowedValues.join(', ')}${typeof value === 'string' && value.length <= 64 ? ` (not ${JSON.stringify(value)})` : ''}`,
        value,
      };
    case 'type':
      return { path, message: `must be ${[p.type].flat().join(' or ')} (not ${jsonType(value)})`, value };
    case 'pattern':
      return { path, message: `must match ${p.pattern}`, value };
    case 'format':
      return { path, message: `must be a valid ${p.format}`, value };
    case 'additionalProperties':
      return { path: [...path, p.additionalProperty], message: 'unknown field', value: undefined };
    case 'minimum':
    case 'maximum':
      return { path, message: `must be ${p.comparison} ${p.limit}`, value };
    case 'minLength':
    case 'maxLength':
    case 'minItems':
    case 'maxItems':
      return {
        path,
        message: `must have ${error.keyword.startsWith('min') ? 'at least' : 'at most'} ${p.limit} ${error.keyword.endsWith('Length') ? 'characters' : 'items'}`,
        value,
      };
    case 'anyOf':
    case 'oneOf':
    case 'not':
      return { path, message: COMBINED[error.keyword], value };
    default:
      return { path, message: `must satisfy ${error.keyword} ${JSON.stringify(p)}`, value };
  }
}

const COMBINED: Record<string, string> = {
  anyOf: 'must match one of the schemas its anyOf lists',
  oneOf: 'must match exactly one of the schemas its oneOf lists',
  not: 'must not match the schema its not names',
};

const jsonType = (v: unknown) =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v;

/** `spec.rules[0].http.paths[0].pathType`. */
export const fieldPath = (path: Array<string | number>) =>
  path.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('') || '(the object)';
