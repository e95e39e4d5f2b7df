/**
 * The pieces of the schemas written here for kinds no package carries (ArtifactGenerator,
 * FluxInstance): objects closed as the API server prunes unknown fields, compiled once, on first use.
 */
import Ajv from 'ajv';
import type { CompiledValidator } from './schema-index';

export const closed = (properties: Record<string, object>, required: string[] = []) => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

/** A validator compiled from `schema` the first time it is asked for. */
export function lazyValidator(schema: object): () => CompiledValidator {
  let compiled: CompiledValidator | undefined;
  return () => {
    compiled ??= new Ajv({ allErrors: true, strict: true }).compile(schema) as CompiledValidator;
    return compiled;
  };
}
