/**
 * An object of a custom kind against its CRD's structural schema (crd-shape.ts), as the API server
 * takes it: a null where the schema allows none is pruned (then `required` notices it is gone), a
 * field no node declares is unknown (the check is strict, as for every kind, see index.ts) unless
 * the node keeps unknown fields, and the root's and embedded objects' apiVersion, kind and metadata
 * are the API server's own. The walk costs at most (schema nodes × object nodes): no schema is
 * compiled into code, and patterns run on RE2.
 */
import type { Shape } from './crd-shape';
import type { CompiledValidator, SchemaError } from './schema-index';

/** Enough to fix an object; a hostile object cannot grow the list past it. */
const MAX_ERRORS = 100;

interface Walk {
  errors: SchemaError[];
  /** False inside allOf/anyOf/oneOf/not: value validations there declare no fields of their own. */
  strict: boolean;
}

export function shapeValidator(root: Shape): CompiledValidator {
  const validate = ((data: unknown) => {
    const walk: Walk = { errors: [], strict: true };
    check(data, root, '', walk, { resource: true, preserve: false });
    validate.errors = walk.errors.length > 0 ? walk.errors : null;
    return walk.errors.length === 0;
  }) as CompiledValidator;
  return validate;
}

interface Place {
  /** The object is a resource (the root, an embedded resource): apiVersion, kind, metadata are the API server's. */
  resource: boolean;
  /** An item of an array that keeps unknown fields: the API server keeps the item's unknown fields too. */
  preserve: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function fail(walk: Walk, instancePath: string, keyword: string, params: Record<string, any>) {
  if (walk.errors.length < MAX_ERRORS) walk.errors.push({ instancePath, keyword, params });
}

const pointer = (path: string, key: string | number) =>
  `${path}/${String(key).replaceAll('~', '~0').replaceAll('/', '~1')}`;

function check(value: unknown, shape: Shape, path: string, walk: Walk, place: Place): void {
  if (value === null) {
    if (!shape.nullable) fail(walk, path, 'type', { type: shape.type ?? 'not null' });
    return;
  }
  if (!hasType(value, shape)) {
    fail(walk, path, 'type', { type: shape.intOrString ? ['integer', 'string'] : shape.type });
    return;
  }
  if (shape.enum && !shape.enum.some((allowed) => sameValue(allowed, value)))
    fail(walk, path, 'enum', { allowedValues: shape.enum });
  if (typeof value === 'string') checkString(value, shape, path, walk);
  else if (typeof value === 'number') checkNumber(value, shape, path, walk);
  else if (Array.isArray(value)) checkArray(value, shape, path, walk);
  else if (isObject(value)) checkObject(value, shape, path, walk, place);
  checkCombined(value, shape, path, walk);
}

function hasType(value: unknown, shape: Shape): boolean {
  if (shape.intOrString) return typeof value === 'string' || Number.isInteger(value);
  switch (shape.type) {
    case undefined:
      return true;
    case 'object':
      return isObject(value);
    case 'array':
      return Array.isArray(value);
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    default:
      return typeof value === shape.type;
  }
}

/** Formats the API server checks whose rules are plain; the others (email, hostname, uri...) are not checked here. */
const FORMATS: Record<string, RegExp> = {
  byte: /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/,
  date: /^\d{4}-\d{2}-\d{2}$/,
  'date-time': /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/,
};

function checkString(value: string, shape: Shape, path: string, walk: Walk) {
  const length = [...value].length;
  if (shape.limits.minLength !== undefined && length < shape.limits.minLength)
    fail(walk, path, 'minLength', { limit: shape.limits.minLength });
  if (shape.limits.maxLength !== undefined && length > shape.limits.maxLength)
    fail(walk, path, 'maxLength', { limit: shape.limits.maxLength });
  if (shape.pattern && !shape.pattern.test(value)) fail(walk, path, 'pattern', { pattern: shape.pattern.source });
  const format = shape.format ? FORMATS[shape.format] : undefined;
  if (format && !format.test(value)) fail(walk, path, 'format', { format: shape.format });
}

function checkNumber(value: number, shape: Shape, path: string, walk: Walk) {
  const { minimum, maximum, multipleOf } = shape.limits;
  if (minimum !== undefined && (value < minimum || (shape.exclusiveMinimum && value === minimum)))
    fail(walk, path, 'minimum', { comparison: shape.exclusiveMinimum ? '>' : '>=', limit: minimum });
  if (maximum !== undefined && (value > maximum || (shape.exclusiveMaximum && value === maximum)))
    fail(walk, path, 'maximum', { comparison: shape.exclusiveMaximum ? '<' : '<=', limit: maximum });
  if (multipleOf !== undefined && multipleOf > 0 && !Number.isInteger(value / multipleOf))
    fail(walk, path, 'multipleOf', { multipleOf });
}

function checkArray(value: unknown[], shape: Shape, path: string, walk: Walk) {
  if (shape.limits.minItems !== undefined && value.length < shape.limits.minItems)
    fail(walk, path, 'minItems', { limit: shape.limits.minItems });
  if (shape.limits.maxItems !== undefined && value.length > shape.limits.maxItems)
    fail(walk, path, 'maxItems', { limit: shape.limits.maxItems });
  if (shape.items) {
    const place = { resource: shape.items.embedded, preserve: shape.preserveUnknown };
    value.forEach((item, i) => check(item, shape.items!, pointer(path, i), walk, place));
  }
  const keyOf = listKey(shape);
  if (!keyOf) return;
  const seen = new Set<string>();
  value.forEach((item, i) => {
    const key = keyOf(item);
    if (seen.has(key)) fail(walk, pointer(path, i), 'uniqueItems', { listType: shape.listType });
    seen.add(key);
  });
}

/** x-kubernetes-list-type: a set holds each value once, a map each combination of its list-map-keys once. */
function listKey(shape: Shape): ((item: unknown) => string) | undefined {
  if (shape.listType === 'set') return stableJson;
  if (shape.listType === 'map' && shape.listMapKeys)
    return (item) => stableJson(shape.listMapKeys!.map((k) => (isObject(item) ? item[k] : undefined)));
  return undefined;
}

function checkObject(value: Record<string, unknown>, shape: Shape, path: string, walk: Walk, place: Place) {
  const keys = Object.keys(value);
  if (shape.limits.minProperties !== undefined && keys.length < shape.limits.minProperties)
    fail(walk, path, 'minProperties', { limit: shape.limits.minProperties });
  if (shape.limits.maxProperties !== undefined && keys.length > shape.limits.maxProperties)
    fail(walk, path, 'maxProperties', { limit: shape.limits.maxProperties });
  const resource = place.resource || shape.embedded;
  for (const key of keys) {
    const child = value[key];
    if (resource && isResourceField(key, child, path, walk)) continue;
    const declared = shape.properties?.get(key);
    if (declared) {
      // The API server prunes a null the field does not allow before it validates.
      if (child !== null || declared.nullable) check(child, declared, pointer(path, key), walk, nested(declared));
    } else if (shape.additional !== undefined) {
      if (shape.additional !== true) check(child, shape.additional, pointer(path, key), walk, nested(shape.additional));
    } else if (walk.strict && !shape.preserveUnknown && !place.preserve) {
      fail(walk, path, 'additionalProperties', { additionalProperty: key });
    }
  }
  for (const key of shape.required) {
    const present = value[key] !== undefined && (value[key] !== null || shape.properties?.get(key)?.nullable);
    if (!present) fail(walk, path, 'required', { missingProperty: key });
  }
}

const nested = (shape: Shape): Place => ({ resource: shape.embedded, preserve: false });

/** apiVersion, kind and metadata of a resource: the API server's fields, whatever the schema declares of them. */
function isResourceField(key: string, value: unknown, path: string, walk: Walk): boolean {
  if (key === 'apiVersion' || key === 'kind') {
    if (typeof value !== 'string') fail(walk, pointer(path, key), 'type', { type: 'string' });
    return true;
  }
  if (key !== 'metadata') return false;
  if (!isObject(value)) fail(walk, pointer(path, key), 'type', { type: 'object' });
  return true;
}

function checkCombined(value: unknown, shape: Shape, path: string, walk: Walk) {
  const passes = (branch: Shape) => {
    const inner: Walk = { errors: [], strict: false };
    check(value, branch, path, inner, { resource: false, preserve: true });
    return inner.errors.length === 0;
  };
  for (const branch of shape.allOf) check(value, branch, path, { ...walk, strict: false }, nested(branch));
  if (shape.anyOf.length > 0 && !shape.anyOf.some(passes)) fail(walk, path, 'anyOf', {});
  if (shape.oneOf.length > 0 && shape.oneOf.filter(passes).length !== 1) fail(walk, path, 'oneOf', {});
  if (shape.not && passes(shape.not)) fail(walk, path, 'not', {});
}

function sameValue(a: unknown, b: unknown): boolean {
  return a === b || (typeof a === 'object' && typeof b === 'object' && stableJson(a) === stableJson(b));
}

function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (isObject(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson(v[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'undefined';
}
