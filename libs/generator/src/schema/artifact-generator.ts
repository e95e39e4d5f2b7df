/**
 * The schema of the ArtifactGenerator the generator writes (source.extensions.fluxcd.io/v1beta1,
 * Flux 2.7's source-watcher), which no schema package carries: the spec of the CRD
 * config/crd/bases/source.extensions.fluxcd.io_artifactgenerators.yaml of fluxcd/source-watcher
 * (Apache-2.0), closed as the API server prunes unknown fields. Status is the controller's.
 */
import { closed, lazyValidator } from './closed-schema';

const NAME = { type: 'string', maxLength: 253, pattern: '^[a-z0-9]([a-z0-9-]*[a-z0-9])?$' };
const ALIAS_REF = { type: 'string', maxLength: 64, pattern: '^@([a-z0-9]([a-z0-9_-]*[a-z0-9])?)$' };

export const ARTIFACT_GENERATOR_SCHEMA = closed(
  {
    apiVersion: { const: 'source.extensions.fluxcd.io/v1beta1' },
    kind: { const: 'ArtifactGenerator' },
    metadata: { type: 'object' },
    spec: closed(
      {
        sources: {
          type: 'array',
          minItems: 1,
          maxItems: 1000,
          items: closed(
            {
              alias: { type: 'string', maxLength: 63, pattern: '^[a-z0-9]([a-z0-9_-]*[a-z0-9])?$' },
              kind: { enum: ['Bucket', 'GitRepository', 'OCIRepository'] },
              name: NAME,
              namespace: { type: 'string', minLength: 1, maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' },
            },
            ['alias', 'kind', 'name'],
          ),
        },
        artifacts: {
          type: 'array',
          minItems: 1,
          maxItems: 1000,
          items: closed(
            {
              name: NAME,
              revision: ALIAS_REF,
              originRevision: ALIAS_REF,
              copy: {
                type: 'array',
                minItems: 1,
                items: closed(
                  {
                    from: { type: 'string', maxLength: 1024, pattern: '^@([a-z0-9]([a-z0-9_-]*[a-z0-9])?)/(.*)$' },
                    to: { type: 'string', maxLength: 1024, pattern: '^@(artifact)/(.*)$' },
                    exclude: { type: 'array', maxItems: 100, items: { type: 'string' } },
                    strategy: { enum: ['Overwrite', 'Merge'] },
                  },
                  ['from', 'to'],
                ),
              },
            },
            ['copy', 'name'],
          ),
        },
      },
      ['artifacts', 'sources'],
    ),
    status: { type: 'object' },
  },
  ['apiVersion', 'kind', 'metadata', 'spec'],
);

export const artifactGeneratorValidator = lazyValidator(ARTIFACT_GENERATOR_SCHEMA);
