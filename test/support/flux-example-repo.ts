/**
 * A reference repository in the layout of fluxcd/flux2-kustomize-helm-example, written by the
 * tests (the same shape, not copied files): clusters/{staging,production} with flux-system and
 * Kustomization files, shared infrastructure/{controllers,configs}, apps/base and one overlay per
 * environment. `artifacts: true` gives the Flux 2.7 variant (an ArtifactGenerator copying the
 * folders into ExternalArtifacts). Hosts sit in HelmRelease values, an HTTPRoute, a Certificate
 * and a Gateway, not only under a DNS domain.
 */
import type { GenerateOptions } from '#libs/generator';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { writeTree } from './files';
import { EXAMPLE_ACME_SERVER, EXAMPLE_HOSTS, SHARED } from './flux-example-shared';
import { acmeFirstPass } from './new-cluster';

export { EXAMPLE_ACME_EMAIL, EXAMPLE_ACME_SERVER, EXAMPLE_HOSTS } from './flux-example-shared';

const gitSource = (env: string) => `---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 1m0s
  ref:
    branch: main
  secretRef:
    name: flux-system
  url: ssh://git@github.com/example/fleet
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 10m0s
  path: ./clusters/${env}
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
`;

/**
 * clusters/<env>/flux-system/ as fluxcd/flux2-kustomize-helm-example ships it (Apache-2.0; commit
 * 4f1a5b1051b469108d1bdf0ebec6c814427e3834): gotk-components.yaml and gotk-sync.yaml are comment-only
 * placeholders for `flux bootstrap` to overwrite (the misspelling is upstream's), and
 * kustomization.yaml lists them with the platform's tenant label and controller patches, which
 * bootstrap keeps.
 */
export const UPSTREAM_BOOTSTRAP_PLACEHOLDER = '# This file will be generated automatically by flux boostrap.\n';
export const UPSTREAM_FLUX_SYSTEM_KUSTOMIZATION = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - gotk-components.yaml
  - gotk-sync.yaml
labels:
  - pairs:
      toolkit.fluxcd.io/tenant: sre-team
patches:
  - patch: |
      - op: add
        path: /spec/template/spec/containers/0/args/-
        value: --concurrent=20
      - op: add
        path: /spec/template/spec/containers/0/args/-
        value: --requeue-dependency=5s
    target:
      kind: Deployment
      name: "(kustomize-controller|helm-controller|source-controller)"
`;

/** flux-system/ of a bootstrapped cluster (a stand-in for the components, the sync objects), or upstream's placeholders. */
function fluxSystemFiles(env: string, placeholders: boolean): Record<string, string> {
  const dir = `clusters/${env}/flux-system`;
  if (placeholders)
    return {
      [`${dir}/gotk-components.yaml`]: UPSTREAM_BOOTSTRAP_PLACEHOLDER,
      [`${dir}/gotk-sync.yaml`]: UPSTREAM_BOOTSTRAP_PLACEHOLDER,
      [`${dir}/kustomization.yaml`]: UPSTREAM_FLUX_SYSTEM_KUSTOMIZATION,
    };
  return {
    [`${dir}/gotk-components.yaml`]:
      '# Flux components (flux install --export) would be here.\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: flux-system\n',
    [`${dir}/gotk-sync.yaml`]: gitSource(env),
    [`${dir}/kustomization.yaml`]:
      'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - gotk-components.yaml\n  - gotk-sync.yaml\n',
  };
}

function source(artifacts: boolean, artifact: string) {
  return artifacts
    ? `  sourceRef:\n    kind: ExternalArtifact\n    name: ${artifact}\n`
    : '  sourceRef:\n    kind: GitRepository\n    name: flux-system\n';
}

function clusterFiles(
  env: string,
  artifacts: boolean,
  acmeServer: string,
  opts: ExampleOptions,
): Record<string, string> {
  const path = (repoPath: string, artifactPath: string) => (artifacts ? artifactPath : repoPath);
  const files: Record<string, string> = {
    ...fluxSystemFiles(env, Boolean(opts.bootstrapPlaceholders)),
    [`clusters/${env}/infrastructure.yaml`]: `---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: infra-controllers
  namespace: flux-system
spec:
  interval: 1h
  retryInterval: 1m
  timeout: 5m
${source(artifacts, 'infrastructure')}  path: ${path('./infrastructure/controllers', './controllers')}
  prune: true
  wait: true
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: infra-configs
  namespace: flux-system
spec:
  dependsOn:
    - name: infra-controllers
  interval: 1h
  retryInterval: 1m
  timeout: 5m
${source(artifacts, 'infrastructure')}  path: ${path('./infrastructure/configs', './configs')}
  prune: true
  patches:
    - patch: |
        - op: replace
          path: /spec/acme/server
          value: ${acmeServer}
      target:
        kind: ClusterIssuer
        name: letsencrypt
`,
    [`clusters/${env}/apps.yaml`]: `---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: flux-system
spec:
  interval: 10m0s
  dependsOn:
    - name: infra-configs
${source(artifacts, 'apps')}  path: ${path(`./apps/${env}`, `./${env}`)}
  prune: true
  wait: true
  timeout: 5m0s
${opts.substitution ? `  postBuild:\n    substitute:\n      APP_DOMAIN: ${env}.example.net\n      CLUSTER_NAME: ${env}\n` : ''}`,
  };
  if (opts.secret || opts.sources) {
    files[`clusters/${env}/apps.yaml`] += `---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: app-secrets
  namespace: flux-system
spec:
  interval: 10m0s
  dependsOn:
    - name: infra-configs
${source(artifacts, 'apps')}  path: ${path(`./apps/${env}/secrets`, `./${env}/secrets`)}
  prune: true
`;
  }
  if (opts.sources) {
    files[`clusters/${env}/infrastructure.yaml`] += `---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: infra-sources
  namespace: flux-system
spec:
  dependsOn:
    - name: infra-controllers
  interval: 1h
${source(artifacts, 'infrastructure')}  path: ${path(`./infrastructure/configs/${env}`, `./configs/${env}`)}
  prune: true
`;
  }
  if (artifacts) {
    files[`clusters/${env}/artifacts.yaml`] = `---
apiVersion: source.extensions.fluxcd.io/v1beta1
kind: ArtifactGenerator
metadata:
  name: flux-system
  namespace: flux-system
spec:
  sources:
    - alias: monorepo
      kind: GitRepository
      name: flux-system
  artifacts:
    - name: infrastructure
      originRevision: "@monorepo"
      copy:
        - from: "@monorepo/infrastructure/**"
          to: "@artifact/"
    - name: apps
      originRevision: "@monorepo"
      copy:
        - from: "@monorepo/apps/base/**"
          to: "@artifact/base/"
        - from: "@monorepo/apps/${env}/**"
          to: "@artifact/${env}/"
`;
  }
  return files;
}

function overlayFiles(
  env: string,
  hosts: { podinfo: string; api: string },
  opts: ExampleOptions,
): Record<string, string> {
  const files: Record<string, string> = {
    [`apps/${env}/kustomization.yaml`]: `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: podinfo
resources:
  - ../base/podinfo
  - routes.yaml
patches:
  - path: podinfo-values.yaml
    target:
      kind: HelmRelease
`,
    [`apps/${env}/podinfo-values.yaml`]: `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: podinfo
  namespace: podinfo
spec:
  chart:
    spec:
      version: ">=1.0.0-alpha"
  test:
    enable: true
  values:
    ingress:
      hosts:
        - host: ${hosts.podinfo}
          paths:
            - path: /
              pathType: ImplementationSpecific
      tls:
        - secretName: podinfo-tls
          hosts:
            - ${hosts.podinfo}
`,
    [`apps/${env}/routes.yaml`]: `# Gateway API route and certificate for ${env}
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: podinfo-api
spec:
  parentRefs:
    - name: public
      namespace: gateway
  hostnames:
    - ${hosts.api}
  rules:
    - backendRefs:
        - name: podinfo
          port: 9898
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: podinfo
spec:
  secretName: podinfo-tls
  issuerRef:
    kind: ClusterIssuer
    name: letsencrypt
  dnsNames:
    - ${hosts.podinfo}
    - ${hosts.api}
`,
  };
  if (opts.substitution) {
    files[`apps/${env}/routes.yaml`] += `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: podinfo-docs
  labels:
    cluster: \${CLUSTER_NAME}
spec:
  hostnames:
    - docs.\${APP_DOMAIN}
`;
  }
  if (opts.secret || opts.sources) {
    files[`apps/${env}/secrets/kustomization.yaml`] =
      `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - redis-auth.yaml\n${opts.sources ? '  - git-source.yaml\n  - git-auth.yaml\n' : ''}`;
    files[`apps/${env}/secrets/redis-auth.yaml`] = `apiVersion: v1
kind: Secret
metadata:
  name: redis-auth
  namespace: podinfo
type: Opaque
stringData:
  password: ${env}-redis-password-0123
`;
  }
  if (opts.sources) Object.assign(files, sourceFiles(env));
  return files;
}

/**
 * Sources that read another system's credentials: a GitRepository of a private GitHub repository
 * (apps/<env>/secrets/), a HelmRepository with a login and an OCIRepository with a pull secret
 * (infrastructure/configs/<env>/), each Secret beside its source, and an internal webhook token.
 */
function sourceFiles(env: string): Record<string, string> {
  return {
    [`apps/${env}/secrets/git-source.yaml`]: `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: podinfo-config
  namespace: podinfo
spec:
  interval: 5m
  url: https://github.com/example/podinfo-config
  ref:
    branch: main
  secretRef:
    name: podinfo-git-auth
`,
    [`apps/${env}/secrets/git-auth.yaml`]: secretYaml('podinfo-git-auth', 'podinfo', {
      username: 'example-bot',
      password: `ghp_${env}ReferenceToken0123456789`,
    }),
    [`infrastructure/configs/${env}/kustomization.yaml`]:
      'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: flux-system\nresources:\n  - charts.yaml\n  - charts-auth.yaml\n  - manifests-pull.yaml\n  - webhook-token.yaml\n',
    [`infrastructure/configs/${env}/charts.yaml`]: `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata:
  name: private-charts
spec:
  interval: 1h
  url: https://charts.example.com
  secretRef:
    name: private-charts-auth
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: platform-manifests
spec:
  interval: 1h
  url: oci://ghcr.io/example/manifests
  ref:
    tag: latest
  secretRef:
    name: ghcr-pull
`,
    [`infrastructure/configs/${env}/charts-auth.yaml`]: secretYaml('private-charts-auth', undefined, {
      username: 'charts-reader',
      password: `${env}-charts-password-0123`,
    }),
    [`infrastructure/configs/${env}/manifests-pull.yaml`]: secretYaml(
      'ghcr-pull',
      undefined,
      { '.dockerconfigjson': JSON.stringify({ auths: { 'ghcr.io': { auth: 'ZXhhbXBsZTpyZWY=' } } }) },
      'kubernetes.io/dockerconfigjson',
    ),
    [`infrastructure/configs/${env}/webhook-token.yaml`]: secretYaml('webhook-token', undefined, {
      token: `${env}-webhook-token-0123`,
    }),
  };
}

function secretYaml(name: string, namespace: string | undefined, stringData: Record<string, string>, type = 'Opaque') {
  const values = Object.entries(stringData)
    .map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}\n`)
    .join('');
  return `apiVersion: v1\nkind: Secret\nmetadata:\n  name: ${name}\n${namespace ? `  namespace: ${namespace}\n` : ''}type: ${type}\nstringData:\n${values}`;
}

export interface ExampleOptions {
  /** Flux 2.7: an ArtifactGenerator and ExternalArtifact sources. */
  artifacts?: boolean;
  /** A Secret in the overlay, applied by a Kustomization of its own. */
  secret?: boolean;
  /**
   * Flux sources that read credentials (GitRepository, HelmRepository, OCIRepository), with their
   * Secrets in apps/<env>/secrets/ and infrastructure/configs/<env>/ (a Kustomization of its own), and
   * an internal token beside them; implies `secret`.
   */
  sources?: boolean;
  /** The apps Kustomization substitutes APP_DOMAIN and CLUSTER_NAME (postBuild.substitute) into a route. */
  substitution?: boolean;
  /** flux-system/ as upstream ships it, not yet bootstrapped: placeholder gotk files (no sync objects). */
  bootstrapPlaceholders?: boolean;
  /**
   * Flux Kustomizations nested two deep, over folders without kustomization.yaml: apps/<env> applies
   * apps-extras (./apps/extras/<env>, dependsOn apps), whose folder applies apps-smoke
   * (./apps/smoke/<env>, dependsOn apps-extras); clusters/<env>/monitoring.yaml applies the shared
   * ./infrastructure/monitoring and depends on both nested ones.
   */
  nested?: boolean;
}

const configMap = (name: string, namespace: string, data: Record<string, string>) =>
  stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data });

const nestedKustomization = (name: string, namespace: string, path: string, dependsOn: object[]) =>
  stringify({
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name, namespace },
    spec: {
      interval: '10m',
      dependsOn,
      // The overlay's kustomization sets namespace podinfo on it: its source and dependencies say theirs.
      sourceRef: { kind: 'GitRepository', name: 'flux-system', namespace: 'flux-system' },
      path,
      prune: true,
    },
  });

/** The files of `nested`, for one environment (every folder a Flux Kustomization applies here has no kustomization.yaml). */
function nestedFiles(env: string, overlayKustomization: string): Record<string, string> {
  return {
    [`apps/${env}/kustomization.yaml`]: overlayKustomization.replace(
      '  - routes.yaml\n',
      '  - routes.yaml\n  - extras.yaml\n',
    ),
    [`apps/${env}/extras.yaml`]: nestedKustomization('apps-extras', 'podinfo', `./apps/extras/${env}`, [
      { name: 'apps', namespace: 'flux-system' },
    ]),
    [`apps/extras/${env}/settings.yaml`]: configMap('podinfo-extras', 'podinfo', { greeting: `hello ${env}` }),
    [`apps/extras/${env}/probes/probe.yaml`]: configMap('podinfo-probe', 'podinfo', { path: '/healthz' }),
    [`apps/extras/${env}/README.md`]: 'Not YAML: Flux leaves it out of the kustomization it generates.\n',
    [`apps/extras/${env}/smoke.yaml`]: nestedKustomization('apps-smoke', 'flux-system', `./apps/smoke/${env}`, [
      { name: 'apps-extras', namespace: 'podinfo' },
    ]),
    [`apps/smoke/${env}/checks.yaml`]: configMap('podinfo-smoke', 'podinfo', { target: 'http://podinfo.podinfo:9898' }),
    [`clusters/${env}/monitoring.yaml`]: stringify({
      apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
      kind: 'Kustomization',
      metadata: { name: 'monitoring', namespace: 'flux-system' },
      spec: {
        interval: '1h',
        dependsOn: [{ name: 'apps-extras', namespace: 'podinfo' }, { name: 'apps-smoke' }],
        sourceRef: { kind: 'GitRepository', name: 'flux-system' },
        path: './infrastructure/monitoring',
        prune: true,
      },
    }),
  };
}

/** Shared by every cluster, applied by each cluster's monitoring Kustomization of `nested`: no kustomization.yaml either. */
const MONITORING: Record<string, string> = {
  'infrastructure/monitoring/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: monitoring\n',
  'infrastructure/monitoring/dashboards/podinfo.yaml': configMap('podinfo-dashboard', 'monitoring', {
    'podinfo.json': '{"title": "podinfo"}',
  }),
};

export function writeFluxExampleReference(root: string, opts: ExampleOptions = {}) {
  const artifacts = Boolean(opts.artifacts);
  writeTree(root, {
    ...SHARED,
    ...clusterFiles('staging', artifacts, EXAMPLE_ACME_SERVER, opts),
    ...clusterFiles('production', artifacts, 'https://acme-v02.api.letsencrypt.org/directory', opts),
    ...overlayFiles('staging', EXAMPLE_HOSTS, opts),
    ...overlayFiles('production', { podinfo: 'podinfo.production', api: 'api.example.net' }, opts),
  });
  if (opts.nested) {
    const overlay = (env: string) => readFileSync(join(root, `apps/${env}/kustomization.yaml`), 'utf8');
    writeTree(root, {
      ...MONITORING,
      ...nestedFiles('staging', overlay('staging')),
      ...nestedFiles('production', overlay('production')),
    });
  }
}

/** The options of a first pass for acme (acme.io) from the example's staging environment into `repoDir`. */
export const exampleFirstPass = (
  repoDir: string,
  templateDir: string,
  extra: Partial<GenerateOptions> = {},
): GenerateOptions =>
  acmeFirstPass(repoDir, templateDir, { hostMap: { [EXAMPLE_HOSTS.podinfo]: 'podinfo.acme.io' }, ...extra });
