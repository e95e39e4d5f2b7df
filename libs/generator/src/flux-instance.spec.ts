import { parseDocument } from 'yaml';
import { clusterSettingsFacts, valueForNewCluster } from './cluster-values';
import {
  fluxInstanceSyncObjects,
  fluxInstanceSyncPath,
  isFluxInstanceRelease,
  leftoverRuntimeValues,
  markFluxInstanceReleases,
  repointFluxInstance,
  unheldPullSecrets,
} from './flux-instance';
import type { ReferenceObject } from './reference';
import { sourceSecretUsers } from './source-secrets';

const instance = (sync: object, distribution: object = {}) => ({
  apiVersion: 'fluxcd.controlplane.io/v1',
  kind: 'FluxInstance',
  metadata: { name: 'flux', namespace: 'flux-system' },
  spec: { distribution: { version: '2.x', registry: 'ghcr.io/fluxcd', ...distribution }, sync },
});

const GIT = {
  kind: 'GitRepository',
  url: 'https://github.com/o/fleet.git',
  ref: 'refs/heads/main',
  path: './clusters/dev',
};
const OCI = {
  kind: 'OCIRepository',
  url: 'oci://ghcr.io/o/fleet',
  ref: 'latest',
  path: 'clusters/dev',
  pullSecret: 'ghcr',
};

const repointed = (body: any, target: { sourceUrl?: string; sourceBranch?: string }) => {
  const doc = parseDocument(JSON.stringify(body));
  const warnings = repointFluxInstance(doc, body, { path: 'clusters/acme', ...target }, 'clusters/acme/fi.yaml');
  return { sync: doc.toJS().spec.sync, warnings };
};

const asReference = (body: any, kind = body.kind): ReferenceObject => ({
  file: 'clusters/dev/flux-system/fi.yaml',
  index: 0,
  apiVersion: body.apiVersion,
  kind,
  name: body.metadata.name,
  namespace: body.metadata.namespace,
  targetNamespace: body.metadata.namespace,
  body,
  shared: false,
});

describe('repointFluxInstance', () => {
  it('moves a Git sync to the new folder (keeping ./), URL and branch as a ref name; the pull secret stays', () => {
    expect(
      repointed(instance({ ...GIT, pullSecret: 'git-auth' }), {
        sourceUrl: 'ssh://git@h/o/acme.git',
        sourceBranch: 'acme',
      }),
    ).toEqual({
      sync: {
        kind: 'GitRepository',
        url: 'ssh://git@h/o/acme.git',
        ref: 'refs/heads/acme',
        path: './clusters/acme',
        pullSecret: 'git-auth',
      },
      warnings: [],
    });
  });

  it('keeps an OCI sync on its artifact and tag, saying why a Git URL or branch was not applied; an oci:// URL is', () => {
    const { sync, warnings } = repointed(instance(OCI), { sourceUrl: 'https://h/o/acme.git', sourceBranch: 'acme' });
    expect(sync).toEqual({ ...OCI, path: 'clusters/acme' });
    expect(warnings).toEqual([
      'clusters/acme/fi.yaml: FluxInstance flux syncs from a OCIRepository; the source URL given is not one, so spec.sync.url stays "oci://ghcr.io/o/fleet"',
      'clusters/acme/fi.yaml: FluxInstance flux syncs from a OCIRepository, which has no branch; spec.sync.ref stays "latest" (the new cluster\'s folder must be in that artifact)',
    ]);
    expect(repointed(instance(OCI), { sourceUrl: 'oci://ghcr.io/o/acme' }).sync.url).toBe('oci://ghcr.io/o/acme');
  });

  it('leaves a FluxInstance without spec.sync alone', () => {
    const body = { ...instance(GIT), spec: { distribution: { version: '2.x', registry: 'r' } } };
    expect(repointed(body, { sourceUrl: 'https://h/x.git' })).toEqual({ sync: undefined, warnings: [] });
  });
});

describe('leftoverRuntimeValues', () => {
  it('names each place of the new FluxInstance that still holds a value the runtime info replaced, without quoting it', () => {
    const body = {
      ...instance({ ...GIT, path: 'clusters/acme' }),
      metadata: { name: 'flux', namespace: 'flux-system', annotations: { 'example.com/cluster': 'staging-1' } },
    };
    const doc = parseDocument(JSON.stringify(body));
    const found = leftoverRuntimeValues(doc, { CLUSTER_NAME: 'staging-1', CLUSTER_REGION: 'eu-west-2' }, 'fi.yaml');
    expect(found).toEqual([
      "fi.yaml: FluxInstance flux metadata.annotations.example.com/cluster still holds the reference's CLUSTER_NAME, which the runtime info moves for the new cluster; set the new cluster's value there by hand",
    ]);
    expect(leftoverRuntimeValues(doc, { CLUSTER_REGION: 'eu-west-2' }, 'fi.yaml')).toEqual([]);
  });
});

describe('fluxInstanceSyncObjects: what Flux Operator creates for spec.sync', () => {
  it('a source named after the namespace (or sync.name) with the ref in its kind, and a Kustomization over the path', () => {
    expect(fluxInstanceSyncObjects(instance({ ...GIT, pullSecret: 'git-auth' }))).toEqual([
      {
        apiVersion: 'source.toolkit.fluxcd.io/v1',
        kind: 'GitRepository',
        metadata: { name: 'flux-system', namespace: 'flux-system' },
        spec: { interval: '1m', ref: { name: 'refs/heads/main' }, url: GIT.url, secretRef: { name: 'git-auth' } },
      },
      {
        apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
        kind: 'Kustomization',
        metadata: { name: 'flux-system', namespace: 'flux-system' },
        spec: {
          interval: '10m0s',
          path: './clusters/dev',
          prune: true,
          sourceRef: { kind: 'GitRepository', name: 'flux-system' },
        },
      },
    ]);
    const [oci] = fluxInstanceSyncObjects(instance({ ...OCI, name: 'fleet', interval: '5m' }));
    expect(oci.metadata.name).toBe('fleet');
    expect(oci.spec).toEqual({ interval: '5m', ref: { tag: 'latest' }, url: OCI.url, secretRef: { name: 'ghcr' } });
    const [bucket] = fluxInstanceSyncObjects(
      instance({ kind: 'Bucket', url: 's3.amazonaws.com', ref: 'fleet', path: 'c' }),
    );
    expect(bucket.spec).toEqual({ interval: '1m', bucketName: 'fleet', endpoint: 's3.amazonaws.com' });
  });
});

describe('the FluxInstance credentials', () => {
  it('are the Secrets of a source: its sync pull secret and the registry logins of its distribution', () => {
    const body = instance(OCI, { imagePullSecret: 'registry', artifactPullSecret: 'ghcr' });
    expect([...sourceSecretUsers([asReference(body)]).keys()].sort()).toEqual([
      'flux-system/ghcr',
      'flux-system/registry',
    ]);
  });

  it('are listed when the repository does not hold them, in their namespace', () => {
    const body = instance(OCI, { imagePullSecret: 'registry' });
    const secret = asReference({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'registry', namespace: 'flux-system' },
    });
    const elsewhere = asReference({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'ghcr', namespace: 'apps' } });
    expect(unheldPullSecrets(asReference(body), [secret, elsewhere], 'clusters/acme/fi.yaml')).toEqual([
      'clusters/acme/fi.yaml: FluxInstance flux logs in with Secret flux-system/ghcr, which the repository does not hold: create it on the new cluster (credentials its source or registry issued) before Flux Operator can sync',
    ]);
    expect(unheldPullSecrets(undefined, [], 'x')).toEqual([]);
  });
});

describe("runtime info's cluster values", () => {
  const from = { domain: 'preview1.example.com', region: 'eu-west-2', acmeEmails: [], envName: 'staging' };
  const to = { domain: 'acme.io', region: 'us-east-1', acmeEmail: 'ops@acme.io', clusterName: 'acme' };

  it('are learned from CLUSTER_DOMAIN / CLUSTER_REGION-style keys that hold a domain and a region', () => {
    expect(
      clusterSettingsFacts({
        CLUSTER_DOMAIN: 'preview1.example.com',
        CLUSTER_REGION: 'eu-west-2',
        ENVIRONMENT: 'staging',
      }),
    ).toEqual({
      domain: 'preview1.example.com',
      region: 'eu-west-2',
    });
    expect(clusterSettingsFacts({ DOMAIN: 'not a domain', REGION: 'Not_A_Region' })).toEqual({});
  });

  it("are read the same way whatever the settings' order, home-ops' SECRET_DOMAIN as well", () => {
    const settings = { SECRET_DOMAIN: 'home.example.net', CLUSTER_DOMAIN: 'cluster.example.org', REGION: 'us-east-1' };
    const reversed = Object.fromEntries(Object.entries(settings).reverse());
    expect(clusterSettingsFacts(settings)).toEqual({ domain: 'cluster.example.org', region: 'us-east-1' });
    expect(clusterSettingsFacts(reversed)).toEqual(clusterSettingsFacts(settings));
    expect(clusterSettingsFacts({ SECRET_DOMAIN: 'home.example.net' }).domain).toBe('home.example.net');
  });

  it('move a cluster name that is the environment or a numbered cluster of it, and nothing else', () => {
    expect(valueForNewCluster('CLUSTER_NAME', 'staging-1', from, to)).toBe('acme');
    expect(valueForNewCluster('CLUSTER_NAME', 'staging', from, to)).toBe('acme');
    expect(valueForNewCluster('CLUSTER_NAME', 'staging-blue', from, to)).toBeUndefined();
    expect(valueForNewCluster('ENVIRONMENT', 'staging-1', from, to)).toBeUndefined();
    expect(valueForNewCluster('CLUSTER_DOMAIN', 'preview1.example.com', from, to)).toBe('acme.io');
  });
});

describe('a HelmRelease of the flux-instance chart (Flux Operator installed by Helm)', () => {
  const release = (chart: object, values: object = { instance: { sync: GIT } }, extra: object = {}) => ({
    apiVersion: 'helm.toolkit.fluxcd.io/v2',
    kind: 'HelmRelease',
    metadata: { name: 'flux-instance', namespace: 'flux-system' },
    spec: { interval: '15m', ...chart, values, ...extra },
  });
  const CHART_REF = { chartRef: { kind: 'OCIRepository', name: 'flux-instance' } };
  const oci = (url: string) => ({
    apiVersion: 'source.toolkit.fluxcd.io/v1',
    kind: 'OCIRepository',
    metadata: { name: 'flux-instance', namespace: 'flux-system' },
    spec: { url, ref: { tag: '0.58.1' } },
  });
  const marked = (...bodies: any[]) => markFluxInstanceReleases(bodies.map((body) => ({ body, file: 'fi.yaml' })));

  it('is told by its chartRef source (OCIRepository or HelmChart) or spec.chart.spec.chart, and no other chart is', () => {
    const byRef = release(CHART_REF);
    expect(marked(byRef, oci('oci://ghcr.io/controlplaneio-fluxcd/charts/flux-instance'))).toEqual([byRef]);
    expect(isFluxInstanceRelease(byRef)).toBe(true);
    const byName = release({
      chart: { spec: { chart: 'flux-instance', sourceRef: { kind: 'HelmRepository', name: 'cp' } } },
    });
    expect(marked(byName)).toEqual([byName]);
    const helmChart = release({ chartRef: { kind: 'HelmChart', name: 'fi', namespace: 'flux-system' } });
    const chart = {
      kind: 'HelmChart',
      metadata: { name: 'fi', namespace: 'flux-system' },
      spec: { chart: 'flux-instance' },
    };
    expect(marked(helmChart, chart)).toEqual([helmChart]);
    const operator = release(CHART_REF);
    expect(marked(operator, oci('oci://ghcr.io/controlplaneio-fluxcd/charts/flux-operator'))).toEqual([]);
    expect(marked(release(CHART_REF))).toEqual([]); // its source is not among the objects
    expect(isFluxInstanceRelease(operator)).toBe(false);
  });

  it('syncs what values.instance.sync says, repointed there as a FluxInstance is, with the objects the operator creates', () => {
    const body = release(CHART_REF);
    marked(body, oci('oci://ghcr.io/controlplaneio-fluxcd/charts/flux-instance'));
    expect(fluxInstanceSyncPath(body)).toBe('clusters/dev');
    const doc = parseDocument(JSON.stringify(body));
    expect(
      repointFluxInstance(
        doc,
        body,
        { path: 'clusters/acme', sourceUrl: 'https://h/o/acme.git', sourceBranch: 'acme' },
        'x',
      ),
    ).toEqual([]);
    expect(doc.toJS().spec.values.instance.sync).toEqual({
      ...GIT,
      url: 'https://h/o/acme.git',
      ref: 'refs/heads/acme',
      path: './clusters/acme',
    });
    expect(doc.toJS().spec.sync).toBeUndefined();
    // The chart's defaults: a FluxInstance named flux (or fullnameOverride), a Git sync when no kind is given.
    const sync = Object.fromEntries(Object.entries(GIT).filter(([key]) => key !== 'kind'));
    const kindless = release(CHART_REF, {
      fullnameOverride: 'fleet',
      instance: { sync: { ...sync, pullSecret: 'git' } },
    });
    marked(kindless, oci('oci://ghcr.io/controlplaneio-fluxcd/charts/flux-instance'));
    expect(fluxInstanceSyncObjects(kindless)[0].kind).toBe('GitRepository');
    expect(unheldPullSecrets(asReference(kindless), [], 'x')).toEqual([
      expect.stringMatching(
        /^x: FluxInstance fleet logs in with Secret flux-system\/git, which the repository does not hold/,
      ),
    ]);
    expect(
      fluxInstanceSyncObjects(body).map(
        (o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name} ${o.spec.path ?? o.spec.url}`,
      ),
    ).toEqual([
      `GitRepository flux-system/flux-system ${GIT.url}`,
      'Kustomization flux-system/flux-system ./clusters/dev',
    ]);
  });

  it('is refused, naming the file and the field, where its sync cannot be moved safely', () => {
    const source = oci('oci://ghcr.io/controlplaneio-fluxcd/charts/flux-instance');
    expect(() => marked(release(CHART_REF, {}, { valuesFrom: [{ kind: 'ConfigMap', name: 'v' }] }), source)).toThrow(
      /^fi\.yaml: HelmRelease flux-instance \(the flux-instance chart, the cluster's Flux entry point\) takes values from spec\.valuesFrom/,
    );
    expect(() =>
      marked(release(CHART_REF, { instance: { sync: { ...GIT, url: 'https://h/${OWNER}/x' } } }), source),
    ).toThrow(/spec\.values\.instance\.sync\.url holds a \$\{VAR\}/);
    expect(() =>
      marked(release(CHART_REF, { instance: { sync: { ...GIT, kind: 'ExternalArtifact' } } }), source),
    ).toThrow(/spec\.values\.instance\.sync\.kind "ExternalArtifact" is not a source the generator can repoint/);
  });
});
