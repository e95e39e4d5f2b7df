/**
 * A CustomResourceDefinition's `openAPIV3Schema` read as the API server reads a structural schema:
 * each node's type (`x-kubernetes-int-or-string` for "integer or string", `nullable` for null),
 * which fields it declares, and whether it keeps fields it does not declare
 * (`x-kubernetes-preserve-unknown-fields`, `x-kubernetes-embedded-resource`). A CRD is a tenant's
 * input: the reading is bounded in nodes and depth, and its patterns run on RE2 (linear time, the
 * engine the API server uses), never on JavaScript's backtracking one.
 */
import { RE2 } from 're2-wasm';

/** Some 10 times the largest real schema measured (Prometheus: 2,149 nodes, depth 12; docs/generator.md). */
export const MAX_SCHEMA_NODES = 20_000;
export const MAX_SCHEMA_DEPTH = 64;
/** Longer patterns are kept out of the RE2 compiler (whose cost grows with the pattern). */
const MAX_PATTERN_LENGTH = 4_096;

export interface Shape {
  /** `object`, `array`, `string`, `integer`, `number`, `boolean`; none for "any type" (int-or-string, free-form). */
  type?: string;
  nullable: boolean;
  intOrString: boolean;
  /** Fields the node does not declare are kept (preserve-unknown-fields), not unknown. */
  preserveUnknown: boolean;
  /** An embedded object: apiVersion, kind and metadata are declared whatever the schema says. */
  embedded: boolean;
  properties?: Map<string, Shape>;
  /** additionalProperties: a schema for every other key, or true (any value). */
  additional?: Shape | true;
  items?: Shape;
  /** A default the API server fills in when the field is missing. */
  hasDefault: boolean;
  /** Required fields that have no default (the API server defaults before it validates). */
  required: string[];
  enum?: unknown[];
  pattern?: { source: string; test: (s: string) => boolean };
  format?: string;
  limits: Partial<Record<Limit, number>>;
  exclusiveMinimum: boolean;
  exclusiveMaximum: boolean;
  listType?: string;
  listMapKeys?: string[];
  allOf: Shape[];
  anyOf: Shape[];
  oneOf: Shape[];
  not?: Shape;
}

export const LIMITS = [
  'minimum',
  'maximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
] as const;
export type Limit = (typeof LIMITS)[number];

/** A schema the reading refuses (over a bound, or a node that is not a schema), with the path of the node. */
export class CrdSchemaError extends Error {}

interface Budget {
  nodes: number;
}

const isObject = (v: unknown): v is Record<string, any> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The shape of one version's openAPIV3Schema; throws CrdSchemaError naming the node over a bound. */
export function readShape(schema: unknown): Shape {
  return shapeOf(schema, 'openAPIV3Schema', 0, { nodes: 0 });
}

function shapeOf(s: unknown, where: string, depth: number, budget: Budget): Shape {
  if (!isObject(s)) throw new CrdSchemaError(`${where} is not a schema`);
  if (depth > MAX_SCHEMA_DEPTH) throw new CrdSchemaError(`${where} is nested deeper than ${MAX_SCHEMA_DEPTH} schemas`);
  if (++budget.nodes > MAX_SCHEMA_NODES)
    throw new CrdSchemaError(`the schema has more than ${MAX_SCHEMA_NODES} nodes (at ${where})`);
  const child = (v: unknown, key: string) => shapeOf(v, `${where}.${key}`, depth + 1, budget);
  const list = (key: string): Shape[] =>
    Array.isArray(s[key]) ? s[key].map((v: unknown, i: number) => child(v, `${key}[${i}]`)) : [];
  const properties = isObject(s.properties)
    ? new Map(Object.entries(s.properties).map(([k, v]) => [k, child(v, `properties.${k}`)]))
    : undefined;
  const defaulted = (k: string) => properties?.get(k)?.hasDefault === true;
  return {
    type: typeof s.type === 'string' && s.type !== '' ? s.type : undefined,
    nullable: s.nullable === true,
    intOrString: s['x-kubernetes-int-or-string'] === true,
    preserveUnknown: s['x-kubernetes-preserve-unknown-fields'] === true,
    embedded: s['x-kubernetes-embedded-resource'] === true,
    properties,
    additional:
      s.additionalProperties === true
        ? true
        : isObject(s.additionalProperties)
          ? child(s.additionalProperties, 'additionalProperties')
          : undefined,
    items: isObject(s.items) ? child(s.items, 'items') : undefined,
    required: Array.isArray(s.required)
      ? s.required.filter((k: unknown) => typeof k === 'string' && !defaulted(k))
      : [],
    enum: Array.isArray(s.enum) ? s.enum : undefined,
    pattern: typeof s.pattern === 'string' ? compilePattern(s.pattern, where) : undefined,
    format: typeof s.format === 'string' ? s.format : undefined,
    limits: Object.fromEntries(LIMITS.filter((k) => typeof s[k] === 'number').map((k) => [k, s[k] as number])),
    exclusiveMinimum: s.exclusiveMinimum === true,
    exclusiveMaximum: s.exclusiveMaximum === true,
    listType: typeof s['x-kubernetes-list-type'] === 'string' ? s['x-kubernetes-list-type'] : undefined,
    listMapKeys: Array.isArray(s['x-kubernetes-list-map-keys']) ? s['x-kubernetes-list-map-keys'] : undefined,
    allOf: list('allOf'),
    anyOf: list('anyOf'),
    oneOf: list('oneOf'),
    not: isObject(s.not) ? child(s.not, 'not') : undefined,
    hasDefault: s.default !== undefined,
  };
}

/** The API server's patterns are Go (RE2) expressions; one RE2 cannot read is refused by the API server too. */
function compilePattern(source: string, where: string): Shape['pattern'] {
  if (source.length > MAX_PATTERN_LENGTH)
    throw new CrdSchemaError(`${where}.pattern is longer than ${MAX_PATTERN_LENGTH} characters`);
  let re: RE2;
  try {
    re = new RE2(source, 'u');
  } catch {
    throw new CrdSchemaError(`${where}.pattern is not a regular expression the API server can read`);
  }
  return { source, test: (value) => re.test(value) };
}
