import type { ReferenceSecret } from './credential-plan';
import type { ReferenceObject } from './reference';
import { sourceSecretUsers, withSourceUse } from './source-secrets';

const object = (apiVersion: string, kind: string, name: string, namespace: string, spec: any): ReferenceObject => ({
  file: `apps/staging/${name}.yaml`,
  index: 0,
  apiVersion,
  kind,
  name,
  namespace,
  targetNamespace: namespace,
  body: { apiVersion, kind, metadata: { name, namespace }, spec },
  shared: false,
});

const SOURCES = [
  object('source.toolkit.fluxcd.io/v1', 'GitRepository', 'config', 'apps', {
    url: 'https://github.com/acme/config',
    secretRef: { name: 'github-auth' },
    proxySecretRef: { name: 'proxy' },
  }),
  object('source.toolkit.fluxcd.io/v1', 'HelmRepository', 'charts', 'flux-system', {
    url: 'https://charts.acme.io',
    secretRef: { name: 'charts-auth' },
    certSecretRef: { name: 'charts-ca' },
  }),
  object('source.toolkit.fluxcd.io/v1beta2', 'OCIRepository', 'manifests', 'apps', {
    url: 'oci://ghcr.io/acme/manifests',
    secretRef: { name: 'ghcr-pull' },
    verify: { provider: 'cosign', secretRef: { name: 'cosign-pub' } },
  }),
  object('source.toolkit.fluxcd.io/v1', 'Bucket', 'assets', 'apps', { bucketName: 'a', secretRef: { name: 's3' } }),
  object('image.toolkit.fluxcd.io/v1beta2', 'ImageRepository', 'api', 'apps', {
    image: 'ghcr.io/acme/api',
    secretRef: { name: 'ghcr-pull' },
  }),
];

describe('sourceSecretUsers: the Secrets Flux sources read', () => {
  it('finds every reference of every source kind, in the source namespace, naming each source that reads it', () => {
    const users = sourceSecretUsers(SOURCES);
    expect([...users.keys()].sort()).toEqual([
      'apps/cosign-pub',
      'apps/ghcr-pull',
      'apps/github-auth',
      'apps/proxy',
      'apps/s3',
      'flux-system/charts-auth',
      'flux-system/charts-ca',
    ]);
    expect(users.get('apps/ghcr-pull')).toEqual([
      'OCIRepository apps/manifests (apps/staging/manifests.yaml)',
      'ImageRepository apps/api (apps/staging/api.yaml)',
    ]);
  });

  it('ignores objects that are not sources (a Kustomization decrypting with a Secret, a HelmRelease) and lists a source once', () => {
    const others = [
      object('kustomize.toolkit.fluxcd.io/v1', 'Kustomization', 'apps', 'flux-system', {
        decryption: { provider: 'sops', secretRef: { name: 'sops-age' } },
      }),
      object('helm.toolkit.fluxcd.io/v2', 'HelmRelease', 'api', 'apps', {
        valuesFrom: [{ kind: 'Secret', name: 'x' }],
      }),
      object('example.com/v1', 'GitRepository', 'lookalike', 'apps', { secretRef: { name: 'not-flux' } }),
    ];
    expect(sourceSecretUsers(others).size).toBe(0);
    expect(sourceSecretUsers([SOURCES[3], SOURCES[3]]).get('apps/s3')).toHaveLength(1);
  });

  it('marks the reference Secrets the sources read, and only those', () => {
    const secret = (namespace: string, name: string): ReferenceSecret => ({
      namespace,
      file: `apps/staging/${name}.yaml`,
      body: { apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: { password: 'x' } },
    });
    const marked = withSourceUse(
      [secret('apps', 'github-auth'), secret('flux-system', 'github-auth'), secret('apps', 'redis')],
      SOURCES,
    );
    expect(marked.map((s) => s.usedBy)).toEqual([
      ['GitRepository apps/config (apps/staging/config.yaml)'],
      undefined,
      undefined,
    ]);
  });

  it("takes the Secrets an External Secrets store authenticates with as another system's credentials", () => {
    const users = sourceSecretUsers([
      object('external-secrets.io/v1', 'SecretStore', 'vault', 'apps', {
        provider: {
          vault: { server: 'https://vault.acme.io', auth: { tokenSecretRef: { name: 'vault-token', key: 'token' } } },
        },
      }),
      object('external-secrets.io/v1', 'ClusterSecretStore', 'aws', '', {
        provider: {
          aws: {
            service: 'SecretsManager',
            auth: {
              secretRef: {
                accessKeyIDSecretRef: { name: 'aws-creds', namespace: 'external-secrets', key: 'id' },
                secretAccessKeySecretRef: { name: 'aws-creds', namespace: 'external-secrets', key: 'secret' },
                // Without a namespace a cluster store's reference names no Secret.
                sessionTokenSecretRef: { name: 'nowhere', key: 'token' },
              },
            },
          },
        },
      }),
    ]);
    expect([...users.keys()].sort()).toEqual(['apps/vault-token', 'external-secrets/aws-creds']);
    expect(users.get('apps/vault-token')).toEqual(['SecretStore apps/vault (apps/staging/vault.yaml)']);
  });
});
