import { GeneratorValidationError } from '../errors';
import { checkSchemas } from './index';
import { hasPackagedSchema, packagedKinds } from './schema-index';

const kustomization = (spec: object) => ({
  apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
  kind: 'Kustomization',
  metadata: { name: 'apps', namespace: 'flux-system', labels: { 'any/label': 'x' } },
  spec: {
    interval: '10m0s',
    path: './apps',
    prune: true,
    sourceRef: { kind: 'GitRepository', name: 'flux-system' },
    ...spec,
  },
});

const refusal = (objects: any[]) => {
  try {
    checkSchemas(objects, 'clusters/acme');
  } catch (e) {
    expect(e).toBeInstanceOf(GeneratorValidationError);
    return (e as Error).message;
  }
  throw new Error('not refused');
};

describe('checkSchemas: every object against the schema of its kind, strictly', () => {
  it('passes valid objects of every packaged group, with maps, free-form Helm values and SOPS metadata left open', () => {
    const check = checkSchemas(
      [
        {
          body: kustomization({ postBuild: { substitute: { ANY_NAME: 'v' } }, dependsOn: [{ name: 'infra' }] }),
          file: 'clusters/acme/apps.yaml',
        },
        {
          body: {
            apiVersion: 'helm.toolkit.fluxcd.io/v2',
            kind: 'HelmRelease',
            metadata: { name: 'web', namespace: 'web' },
            spec: {
              interval: '1h',
              chart: { spec: { chart: 'web', sourceRef: { kind: 'HelmRepository', name: 'charts' } } },
              values: { interval: 'not a duration here', nested: { anything: [1, { x: true }] } },
            },
          },
        },
        {
          body: {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name: 's' },
            stringData: { k: 'ENC[AES256_GCM,data:x]' },
            sops: { mac: 'ENC[...]', lastmodified: '2026-01-01T00:00:00Z', age: [{ recipient: 'age1x' }] },
          },
        },
        {
          body: {
            apiVersion: 'cert-manager.io/v1',
            kind: 'ClusterIssuer',
            metadata: { name: 'le' },
            spec: {
              acme: {
                email: 'a@b.c',
                server: 'https://acme',
                privateKeySecretRef: { name: 'k' },
                solvers: [{ http01: { ingress: { ingressClassName: 'nginx' } } }],
              },
            },
          },
        },
        {
          body: {
            apiVersion: 'gateway.networking.k8s.io/v1',
            kind: 'HTTPRoute',
            metadata: { name: 'r' },
            spec: { hostnames: ['a.acme.io'], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] },
          },
        },
        {
          body: {
            apiVersion: 'source.extensions.fluxcd.io/v1beta1',
            kind: 'ArtifactGenerator',
            metadata: { name: 'apps', namespace: 'flux-system' },
            spec: {
              sources: [{ alias: 'repo', kind: 'GitRepository', name: 'flux-system' }],
              artifacts: [{ name: 'apps', copy: [{ from: '@repo/apps/**', to: '@artifact/' }] }],
            },
          },
        },
      ],
      'clusters/acme',
    );
    expect(check).toEqual({ checked: 6, withoutSchema: [], warnings: [] });
  });

  it('names the file, the object and the field of every problem: enums, types, unknown fields at any depth, Flux durations', () => {
    const message = refusal([
      {
        body: kustomization({
          sourceRef: { kind: 'HelmRepository', name: 'x' },
          dependOn: [{ name: 'infra' }],
          interval: '50 minutes',
          decryption: { provider: 'sops', secretref: { name: 'k' } },
        }),
        file: 'clusters/acme/apps.yaml',
      },
    ]);
    expect(message).toMatch(/^clusters\/acme does not match the schemas the cluster applies: /);
    for (const problem of [
      'spec.sourceRef.kind must be one of OCIRepository, GitRepository, Bucket, ExternalArtifact (not "HelmRepository")',
      'spec.dependOn unknown field',
      'spec.interval must be a Go duration such as 30s, 10m or 1h30m',
      'spec.decryption.secretref unknown field',
    ])
      expect(message).toContain(`clusters/acme/apps.yaml: Kustomization flux-system/apps: ${problem}`);
  });

  it('refuses a number where a schema wants a string without printing the value, and an ArtifactGenerator field Flux does not know', () => {
    const message = refusal([
      {
        body: {
          apiVersion: 'bitnami.com/v1alpha1',
          kind: 'SealedSecret',
          metadata: { name: 's', namespace: 'db' },
          spec: { encryptedData: { password: 987654321 } },
        },
        file: 'a.yaml',
      },
      {
        body: {
          apiVersion: 'source.extensions.fluxcd.io/v1beta1',
          kind: 'ArtifactGenerator',
          metadata: { name: 'g' },
          spec: {
            sources: [{ alias: 'r', kind: 'GitRepository', name: 'f' }],
            artifacts: [{ name: 'a', copy: [{ from: '@r/x/**', to: '@artifact/', mode: 'fast' }] }],
          },
        },
        file: 'b.yaml',
      },
    ]);
    expect(message).toContain('a.yaml: SealedSecret db/s: spec.encryptedData.password must be string (not integer)');
    expect(message).not.toContain('987654321');
    expect(message).toContain('b.yaml: ArtifactGenerator g: spec.artifacts[0].copy[0].mode unknown field');
  });

  it('leaves values with a variable Flux fills in from outside the repository, and lists kinds no schema describes', () => {
    const check = checkSchemas(
      [
        {
          body: {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            metadata: { name: 'd' },
            spec: {
              replicas: '${REPLICAS}',
              selector: {},
              template: { spec: { containers: [{ name: 'c', image: 'i' }] } },
            },
          },
        },
        { body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { whatever: 1 } } },
      ],
      'x',
    );
    expect(check).toEqual({ checked: 1, withoutSchema: ['example.com/v1 Widget'], warnings: [] });
  });

  it('shows the first five problems and counts the rest', () => {
    const many = Array.from({ length: 7 }, (_, i) => ({
      body: kustomization({ [`typo${i}`]: true }),
      file: `k${i}.yaml`,
    }));
    const message = refusal(many);
    expect(message.match(/unknown field/g)).toHaveLength(5);
    expect(message).toMatch(/; and 2 more$/);
  });
});

describe('checkSchemas: a file:// GitRepository', () => {
  it('is a warning with the remedy (a development target), while any other bad URL is refused', () => {
    const source = (url: string) => ({
      body: {
        apiVersion: 'source.toolkit.fluxcd.io/v1',
        kind: 'GitRepository',
        metadata: { name: 'flux-system', namespace: 'flux-system' },
        spec: { interval: '1m', url },
      },
      file: 'g.yaml',
    });
    expect(checkSchemas([source('file:///srv/fleet.git')], 'x').warnings).toEqual([
      'g.yaml: GitRepository flux-system/flux-system: spec.url is a file:// URL, which Flux cannot fetch (give repo.flux_url or --source-url)',
    ]);
    expect(refusal([source('ftp://git.example.com/fleet.git')])).toContain(
      'g.yaml: GitRepository flux-system/flux-system: spec.url must match ^(http|https|ssh)://.*$',
    );
  });
});

describe('the packaged schemas', () => {
  it("checks Flux Operator's FluxInstance, which no package describes: its sync kinds, durations and unknown fields", () => {
    const fluxInstance = (sync: object) => ({
      body: {
        apiVersion: 'fluxcd.controlplane.io/v1',
        kind: 'FluxInstance',
        metadata: { name: 'flux', namespace: 'flux-system' },
        spec: {
          distribution: { version: '2.x', registry: 'ghcr.io/fluxcd' },
          components: ['source-controller', 'kustomize-controller'],
          cluster: { type: 'kubernetes', multitenant: true, networkPolicy: true },
          kustomize: { patches: [{ target: { kind: 'Deployment' }, patch: '- op: add' }] },
          sync: {
            kind: 'GitRepository',
            url: 'https://h/f.git',
            ref: 'refs/heads/main',
            path: 'clusters/acme',
            ...sync,
          },
        },
      },
      file: 'clusters/acme/flux-system/flux-instance.yaml',
    });
    expect(checkSchemas([fluxInstance({ interval: '5m', pullSecret: 'flux-system' })], 'clusters/acme')).toEqual({
      checked: 1,
      withoutSchema: [],
      warnings: [],
    });
    const message = refusal([fluxInstance({ kind: 'HelmRepository', interval: '5 minutes', branch: 'main' })]);
    for (const problem of [
      'FluxInstance flux-system/flux: spec.sync.kind must be one of OCIRepository, GitRepository, Bucket (not "HelmRepository")',
      'spec.sync.interval must match',
      'spec.sync.branch unknown field',
    ])
      expect(message).toContain(problem);
  });

  it('finds every kind the packages describe where a lookup looks for it, and nothing for a path outside them', () => {
    const kinds = packagedKinds();
    expect(kinds.length).toBeGreaterThan(200);
    const missed = kinds.filter((k) => {
      const slash = k.lastIndexOf('/');
      return !hasPackagedSchema(k.slice(0, slash), k.slice(slash + 1));
    });
    expect(missed).toEqual([]);
    expect(hasPackagedSchema('../v1', 'ConfigMap')).toBe(false);
    expect(hasPackagedSchema('v1', '../ConfigMap')).toBe(false);
  });
});
