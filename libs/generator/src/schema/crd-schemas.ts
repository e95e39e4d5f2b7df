/**
 * The schemas of kinds no package describes, from the CustomResourceDefinitions the same build
 * applies (a chart's or a vendored CRD folder's): each version's openAPIV3Schema, read the first
 * time an object of its kind is checked. A CRD over the reading's bounds refuses its kind's objects
 * with the reason, instead of spending unbounded time on a tenant's schema.
 */
import { CrdSchemaError, readShape } from './crd-shape';
import { shapeValidator } from './crd-validator';
import { CompiledValidator, kindKey } from './schema-index';

export const CRD_API_VERSION = 'apiextensions.k8s.io/v1';

interface CrdVersion {
  schema: unknown;
  /** `CustomResourceDefinition <name>` and its file, for a refusal. */
  crd: string;
  validator?: CompiledValidator | CrdSchemaError;
}

export type CrdSchemas = Map<string, CrdVersion>;

/** The kinds the CRDs among `objects` define, by `<group>/<version>/<Kind>`. */
export function crdSchemas(objects: ReadonlyArray<{ body: any; file?: string }>): CrdSchemas {
  const found: CrdSchemas = new Map();
  for (const { body, file } of objects) {
    if (body?.apiVersion !== CRD_API_VERSION || body.kind !== 'CustomResourceDefinition') continue;
    const { group, names, versions } = body.spec ?? {};
    if (typeof group !== 'string' || typeof names?.kind !== 'string' || !Array.isArray(versions)) continue;
    const crd = `${file ? `${file}: ` : ''}CustomResourceDefinition ${String(body.metadata?.name)}`;
    for (const version of versions) {
      const schema = version?.schema?.openAPIV3Schema;
      if (typeof version?.name === 'string' && schema !== undefined)
        found.set(kindKey(`${group}/${version.name}`, names.kind), { schema, crd });
    }
  }
  return found;
}

/** The kind's validator from its CRD, or the CRD's refusal; undefined when no CRD of the build defines the kind. */
export function crdValidator(
  schemas: CrdSchemas,
  apiVersion: string,
  kind: string,
): CompiledValidator | CrdSchemaError | undefined {
  const entry = schemas.get(kindKey(apiVersion, kind));
  if (!entry) return undefined;
  if (!entry.validator) {
    try {
      entry.validator = shapeValidator(readShape(entry.schema));
    } catch (e) {
      if (!(e instanceof CrdSchemaError)) throw e;
      entry.validator = new CrdSchemaError(`${entry.crd}: ${e.message}`);
    }
  }
  return entry.validator;
}
