/**
 * Fields the packaged schemas lost. kubernetes-models builds its validators from OpenAPI and CRD
 * schemas after removing every property named `description` or `x-kubernetes-*` (it reads them as
 * schema annotations), so the strict check saw a CRD's `openAPIV3Schema.description` or
 * `x-kubernetes-preserve-unknown-fields`, a PriorityClass's `description` or an Alertmanager
 * receiver's `description` as unknown fields. Their types still declare them (the packages'
 * `.d.ts` files, which a test compares with this table): here they are known again, and typed.
 */
import { kindKey } from './schema-index';

type Path = ReadonlyArray<string | number>;
/** A message when the value is not of the field's type, null when it is. */
type FieldType = (value: unknown) => string | null;

const text: FieldType = (v) => (typeof v === 'string' ? null : 'must be string');
const flag: FieldType = (v) => (typeof v === 'boolean' ? null : 'must be boolean');
const oneOf =
  (...allowed: string[]): FieldType =>
  (v) =>
    typeof v === 'string' && allowed.includes(v) ? null : `must be one of ${allowed.join(', ')}`;
const strings: FieldType = (v) =>
  Array.isArray(v) && v.every((s) => typeof s === 'string') ? null : 'must be an array of strings';

const RULE_FIELDS = new Set(['rule', 'message', 'messageExpression', 'reason', 'fieldPath', 'optionalOldSelf']);
/** `x-kubernetes-validations`: CEL rules (the API server runs them; here only their shape is checked). */
const celRules: FieldType = (v) => {
  if (!Array.isArray(v)) return 'must be an array of validation rules';
  for (const rule of v) {
    if (!rule || typeof rule !== 'object' || Array.isArray(rule) || typeof rule.rule !== 'string')
      return 'must be an array of validation rules, each with a string rule';
    const unknown = Object.keys(rule).find((k) => !RULE_FIELDS.has(k));
    if (unknown !== undefined) return `holds a validation rule with the unknown field ${JSON.stringify(unknown)}`;
  }
  return null;
};

/** What a JSONSchemaProps node (every node of a CRD's openAPIV3Schema) declares beyond the packaged schema. */
const SCHEMA_PROPS: Record<string, FieldType> = {
  description: text,
  'x-kubernetes-embedded-resource': flag,
  'x-kubernetes-int-or-string': flag,
  'x-kubernetes-preserve-unknown-fields': flag,
  'x-kubernetes-list-map-keys': strings,
  'x-kubernetes-list-type': oneOf('atomic', 'set', 'map'),
  'x-kubernetes-map-type': oneOf('granular', 'atomic'),
  'x-kubernetes-validations': celRules,
};

const matches = (path: Path, pattern: ReadonlyArray<string | '#'>) =>
  path.length === pattern.length && pattern.every((p, i) => (p === '#' ? typeof path[i] === 'number' : p === path[i]));

const startsWith = (path: Path, pattern: ReadonlyArray<string | '#'>) =>
  path.length >= pattern.length && matches(path.slice(0, pattern.length), pattern);

const OPEN_API_SCHEMA = ['spec', 'versions', '#', 'schema', 'openAPIV3Schema'] as const;

/** The dropped fields a node of a CRD declares: every JSONSchemaProps node, its externalDocs, its printer columns. */
function crdFields(path: Path): Record<string, FieldType> | undefined {
  if (matches(path, ['spec', 'versions', '#', 'additionalPrinterColumns', '#'])) return { description: text };
  if (!startsWith(path, OPEN_API_SCHEMA)) return undefined;
  return path.at(-1) === 'externalDocs' ? { description: text } : SCHEMA_PROPS;
}

const DESCRIBED_RECEIVERS: Array<Array<string | '#'>> = [
  ['spec', 'receivers', '#', 'opsgenieConfigs', '#'],
  ['spec', 'receivers', '#', 'pagerdutyConfigs', '#'],
];

const atRoot = (path: Path) => (path.length === 0 ? { description: text } : undefined);
const inSpec = (path: Path) => (matches(path, ['spec']) ? { description: text } : undefined);

/** By kind: the dropped fields a node at `path` declares. */
const DROPPED: Record<string, (path: Path) => Record<string, FieldType> | undefined> = {
  [kindKey('apiextensions.k8s.io/v1', 'CustomResourceDefinition')]: crdFields,
  [kindKey('scheduling.k8s.io/v1', 'PriorityClass')]: atRoot,
  [kindKey('scheduling.k8s.io/v1beta1', 'PriorityClass')]: atRoot,
  [kindKey('gateway.networking.k8s.io/v1', 'GatewayClass')]: inSpec,
  [kindKey('gateway.networking.k8s.io/v1beta1', 'GatewayClass')]: inSpec,
  [kindKey('gateway.networking.x-k8s.io/v1alpha1', 'XMesh')]: inSpec,
  [kindKey('monitoring.coreos.com/v1alpha1', 'AlertmanagerConfig')]: (path) =>
    DESCRIBED_RECEIVERS.some((p) => matches(path, p)) ? { description: text } : undefined,
  [kindKey('monitoring.coreos.com/v1beta1', 'AlertmanagerConfig')]: (path) =>
    DESCRIBED_RECEIVERS.some((p) => matches(path, p)) ? { description: text } : undefined,
};

/** The `.d.ts` types the table covers (a test checks these are all the packages' types declaring such fields). */
export const COVERED_TYPES = [
  'JSONSchemaProps',
  'ExternalDocumentation',
  'CustomResourceColumnDefinition',
  'PriorityClass',
  'GatewayClassSpec',
  'MeshSpec',
  'OpsGenieConfig',
  'PagerDutyConfig',
];

/**
 * What to say of a key the packaged validator never looked up: undefined when the kind does not
 * declare it there (an unknown field), else null or the message of a value of the wrong type.
 */
export function droppedFieldRule(apiVersion: string, kind: string) {
  const fieldsAt = DROPPED[kindKey(apiVersion, kind)];
  if (!fieldsAt) return undefined;
  return (path: Path, key: string, value: unknown): string | null | undefined => {
    const type = fieldsAt(path)?.[key];
    return type ? type(value) : undefined;
  };
}
