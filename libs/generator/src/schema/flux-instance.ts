/**
 * The schema of Flux Operator's FluxInstance (fluxcd.controlplane.io/v1), which no schema package
 * carries. Written here from the documented API (the fields, types, enums, patterns and required
 * fields of FluxInstanceSpec, controlplaneio-fluxcd/flux-operator api/v1): the operator's own CRD is
 * AGPL-3.0 and is not copied. Closed as the API server prunes unknown fields; status is the operator's.
 */
import { FLUX_DURATION } from './flux-rules';
import { closed, lazyValidator } from './closed-schema';

const STRING = { type: 'string' };
const BOOLEAN = { type: 'boolean' };
const STRING_MAP = { type: 'object', additionalProperties: { type: 'string' } };

const COMPONENTS = [
  'source-controller',
  'kustomize-controller',
  'helm-controller',
  'notification-controller',
  'image-reflector-controller',
  'image-automation-controller',
  'source-watcher',
];

/** fluxcd/pkg apis/kustomize Patch: an inline patch and the objects it targets. */
const PATCH = closed(
  {
    patch: STRING,
    target: closed({
      group: STRING,
      version: STRING,
      kind: STRING,
      name: STRING,
      namespace: STRING,
      annotationSelector: STRING,
      labelSelector: STRING,
    }),
  },
  ['patch'],
);

export const FLUX_INSTANCE_SCHEMA = closed(
  {
    apiVersion: { const: 'fluxcd.controlplane.io/v1' },
    kind: { const: 'FluxInstance' },
    metadata: { type: 'object' },
    spec: closed(
      {
        distribution: closed(
          {
            version: STRING,
            registry: STRING,
            variant: {
              enum: ['upstream-alpine', 'enterprise-alpine', 'enterprise-distroless', 'enterprise-distroless-fips'],
            },
            imagePullSecret: STRING,
            artifact: { type: 'string', pattern: '^oci://.*$' },
            artifactPullSecret: STRING,
          },
          ['registry', 'version'],
        ),
        components: { type: 'array', items: { enum: COMPONENTS } },
        commonMetadata: closed({ labels: STRING_MAP, annotations: STRING_MAP }),
        cluster: closed({
          domain: STRING,
          multitenant: BOOLEAN,
          multitenantWorkloadIdentity: BOOLEAN,
          tenantDefaultServiceAccount: STRING,
          tenantDefaultDecryptionServiceAccount: STRING,
          tenantDefaultKubeConfigServiceAccount: STRING,
          objectLevelWorkloadIdentity: BOOLEAN,
          networkPolicy: BOOLEAN,
          type: { enum: ['kubernetes', 'openshift', 'aws', 'azure', 'gcp'] },
          size: { enum: ['small', 'medium', 'large'] },
        }),
        sharding: closed(
          {
            key: STRING,
            shards: { type: 'array', minItems: 1, items: STRING },
            storage: { enum: ['ephemeral', 'persistent'] },
          },
          ['shards'],
        ),
        storage: closed({ class: STRING, size: STRING }, ['class', 'size']),
        kustomize: closed({ patches: { type: 'array', items: PATCH } }),
        wait: BOOLEAN,
        migrateResources: BOOLEAN,
        sync: closed(
          {
            name: { type: 'string', maxLength: 63 },
            interval: { type: 'string', pattern: FLUX_DURATION.source },
            kind: { enum: ['OCIRepository', 'GitRepository', 'Bucket'] },
            url: STRING,
            ref: STRING,
            path: STRING,
            pullSecret: STRING,
            provider: { enum: ['generic', 'aws', 'azure', 'gcp', 'github'] },
          },
          ['kind', 'path', 'ref', 'url'],
        ),
      },
      ['distribution'],
    ),
    status: { type: 'object' },
  },
  ['apiVersion', 'kind', 'metadata', 'spec'],
);

export const fluxInstanceValidator = lazyValidator(FLUX_INSTANCE_SCHEMA);
