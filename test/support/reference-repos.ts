import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { SHIPPED_TEMPLATE } from '#libs/generator';
import { writeTree } from './files';

/** Credentials planted in the second reference repository; none may reach any output. */
export const CORP_PLANTED = {
  registryUser: 'stg-robot',
  registryPassword: 'StgRobotPw-55e1aa90',
  redisPassword: 'RedisStgPass-0099-xyz',
  mongoUser: 'mongo_admin_stg',
  mongoPassword: 'MongoStgRootPw-1234abcd',
  apiToken: 'tok_live_stg_8f8f8f8f8f8f',
};

const b64 = (s: string) => Buffer.from(s).toString('base64');

const ingress = (name: string, hosts: string[]) => `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ${name}
spec:
  ingressClassName: traefik
  tls:
    - hosts: [${hosts.join(', ')}]
      secretName: ${name}-cert
  rules:
${hosts
  .map(
    (h) => `    - host: ${h}
      http:
        paths:
          - path: /
            pathType: Prefix
            backend: {service: {name: ${name}, port: {number: 80}}}`,
  )
  .join('\n')}
`;

/** external-dns as a plain Deployment configured by flags, its region in AWS_REGION. */
const externalDnsDeployment = (args: string[], region: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: external-dns
  namespace: kube-system
spec:
  selector: {matchLabels: {app: external-dns}}
  template:
    metadata: {labels: {app: external-dns}}
    spec:
      containers:
        - name: external-dns
          image: registry.k8s.io/external-dns/external-dns:v0.15.0
          args:
${args.map((a) => `            - '${a}'`).join('\n')}
          env:
            - name: AWS_REGION
              value: '${region}'
`;

const deployment = (name: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      containers:
        - name: ${name}
          image: registry.corp.example.org/shop/${name}:2.0.1
`;

/**
 * A platform repository shaped differently from the shipped template: environment `staging`,
 * layers core/services/data/issuers, the sync objects in sync.yaml, external-dns as a plain
 * Deployment with flags, a shared base under platform/services, Ingresses both in the base and
 * in the layer, a layer-level namespace, and Secrets with data (base64) in a multi-document file.
 */
export function writeCorpReference(root: string, opts: { strayHost?: boolean } = {}) {
  const services = ['catalog', 'cart', 'checkout'];
  const files: Record<string, string> = {
    'clusters/staging/flux-system/kustomization.yaml': 'resources:\n  - sync.yaml\n',
    'clusters/staging/flux-system/sync.yaml': `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec:
  interval: 5m
  ref: {branch: trunk}
  url: https://git.corp.example.org/fleet.git
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: core, namespace: flux-system}
spec:
  interval: 5m
  path: ./clusters/staging/core
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: services, namespace: flux-system}
spec:
  interval: 5m
  path: ./clusters/staging/services
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
  dependsOn: [{name: data}]
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: data, namespace: flux-system}
spec:
  interval: 5m
  path: ./clusters/staging/data
  prune: true
  sourceRef: {kind: GitRepository, name: flux-system}
`,
    'clusters/staging/core/kustomization.yaml': 'resources:\n  - external-dns.yaml\n  - storage.yaml\n',
    'clusters/staging/core/external-dns.yaml': externalDnsDeployment(
      ['--source=ingress', '--provider=aws', '--domain-filter=stg.corp.example.org', '--txt-owner-id=staging'],
      'ap-southeast-2',
    ),
    'clusters/staging/core/storage.yaml': `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: ebs.csi.aws.com
`,
    'clusters/staging/services/kustomization.yaml': `namespace: shop
resources:
  - ../../../platform/services
  - pull-secret.yaml
  - gateway.yaml
`,
    'clusters/staging/services/pull-secret.yaml': `apiVersion: v1
kind: Secret
metadata: {name: corp-pull}
type: kubernetes.io/dockerconfigjson
data:
  .dockerconfigjson: ${b64(JSON.stringify({ auths: { 'registry.corp.example.org': { username: CORP_PLANTED.registryUser, password: CORP_PLANTED.registryPassword } } }))}
`,
    'clusters/staging/services/gateway.yaml': ingress('gateway', [
      'shop.stg.corp.example.org',
      opts.strayHost ? 'admin.other.example.com' : 'admin.stg.corp.example.org',
    ]),
    'clusters/staging/data/kustomization.yaml': 'namespace: state\nresources:\n  - secrets.yaml\n',
    'clusters/staging/data/secrets.yaml': `apiVersion: v1
kind: ConfigMap
metadata: {name: data-settings}
data: {redis-host: redis.state.svc}
---
apiVersion: v1
kind: Secret
metadata: {name: redis-auth, labels: {tier: cache}}
data:
  redis-password: ${b64(CORP_PLANTED.redisPassword)}
---
apiVersion: v1
kind: Secret
metadata: {name: mongo-root}
stringData:
  root-username: ${CORP_PLANTED.mongoUser}
  root-password: ${CORP_PLANTED.mongoPassword}
  connection-string: mongodb://${CORP_PLANTED.mongoUser}:${CORP_PLANTED.mongoPassword}@mongo.state.svc:27017/admin
  api-token: ${CORP_PLANTED.apiToken}
`,
    'clusters/staging/issuers/kustomization.yaml': 'resources:\n  - issuer.yaml\n',
    'clusters/staging/issuers/issuer.yaml': `apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: {name: corp-acme}
spec:
  acme:
    email: staging-team@corp.example.org
    server: https://acme-v02.api.letsencrypt.org/directory
    privateKeySecretRef: {name: corp-acme-key}
    solvers:
      - dns01:
          route53: {region: ap-southeast-2}
        selector:
          dnsNames: ['*.stg.corp.example.org']
`,
    'platform/services/kustomization.yaml': `resources:\n${services.map((s) => `  - ${s}.yaml\n  - ${s}-ingress.yaml`).join('\n')}\n`,
  };
  for (const s of services) {
    files[`platform/services/${s}.yaml`] = deployment(s);
    files[`platform/services/${s}-ingress.yaml`] = ingress(
      s,
      s === 'checkout'
        ? ['checkout.stg.corp.example.org', 'pay.stg.corp.example.org', 'stg.corp.example.org']
        : [`${s}.stg.corp.example.org`],
    );
  }
  writeTree(root, files);
}

/** Credentials planted in the settings-style cluster-vars reference. */
export const SETTINGS_PLANTED = { dbUser: 'shop_stg_owner', dbPassword: 'ShopStgDbPw-7a7a7a7a' };

const fluxKustomization = (name: string, path: string, spec: Record<string, unknown>) =>
  JSON.stringify({
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name, namespace: 'flux-system' },
    spec: { interval: '5m', path, prune: true, sourceRef: { kind: 'GitRepository', name: 'fleet' }, ...spec },
  });

const settingsFrom = {
  substituteFrom: [
    { kind: 'ConfigMap', name: 'cluster-settings' },
    { kind: 'Secret', name: 'cluster-secrets', optional: true },
  ],
};

/**
 * A cluster-vars reference shaped unlike the shipped phased platform: the variables ConfigMap is
 * called cluster-settings and lives in a vars/ folder, the phases are Flux Kustomizations declared
 * in the environment's own files (infrastructure.yaml, apps.yaml) over shared infra/ and apps/
 * folders, external-dns is a Deployment with flags, one Kustomization adds an inline variable,
 * an optional Secret source is absent, and one object turns substitution off.
 */
export function writeSettingsReference(root: string, opts: { generatedApps?: boolean } = {}) {
  writeTree(root, {
    'clusters/staging/kustomization.yaml': `resources:\n  - flux-system\n  - vars\n  - infrastructure.yaml\n  - apps.yaml\n${opts.generatedApps ? '  - smoke.yaml\n' : ''}`,
    'clusters/staging/flux-system/kustomization.yaml': 'resources:\n  - gotk-sync.yaml\n',
    'clusters/staging/flux-system/gotk-sync.yaml': `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: fleet, namespace: flux-system}
spec: {interval: 1m, url: 'ssh://git@git.corp.example/fleet.git', ref: {branch: trunk}}
---
${fluxKustomization('flux-system', './clusters/staging', {})}
`,
    'clusters/staging/vars/kustomization.yaml': 'resources:\n  - cluster-settings.yaml\n',
    'clusters/staging/vars/cluster-settings.yaml': `apiVersion: v1
kind: ConfigMap
metadata: {name: cluster-settings, namespace: flux-system}
data:
  SECRET_DOMAIN: staging.corp.example
  AWS_REGION: ca-central-1
  LE_EMAIL: infra-staging@corp.example
  CLUSTER: staging
  DB_SIZE: 20Gi
`,
    'clusters/staging/infrastructure.yaml': `${fluxKustomization('controllers', './infra/controllers', { postBuild: settingsFrom })}
---
${fluxKustomization('configs', './infra/configs', { dependsOn: [{ name: 'controllers' }], postBuild: { ...settingsFrom, substitute: { ISSUER_NAME: 'corp-acme' } } })}
`,
    'clusters/staging/apps.yaml': `${fluxKustomization('credentials', './clusters/staging/credentials', { dependsOn: [{ name: 'controllers' }] })}
---
${fluxKustomization('apps', './apps/staging', { dependsOn: [{ name: 'configs' }, { name: 'credentials' }], postBuild: settingsFrom })}
`,
    'clusters/staging/credentials/kustomization.yaml': 'namespace: shop\nresources:\n  - db.yaml\n',
    'clusters/staging/credentials/db.yaml': `apiVersion: v1
kind: Secret
metadata: {name: shop-db}
stringData: {username: ${SETTINGS_PLANTED.dbUser}, password: ${SETTINGS_PLANTED.dbPassword}, database: shop}
`,
    'infra/controllers/kustomization.yaml': 'resources:\n  - external-dns.yaml\n  - sealed-secrets.yaml\n',
    'infra/controllers/external-dns.yaml': externalDnsDeployment(
      ['--provider=aws', '--domain-filter=${SECRET_DOMAIN}', '--txt-owner-id=${CLUSTER}'],
      '${AWS_REGION}',
    ),
    'infra/controllers/sealed-secrets.yaml': `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: sealed-secrets, namespace: kube-system}
spec: {interval: 30m, chart: {spec: {chart: sealed-secrets, version: 2.16.2, sourceRef: {kind: HelmRepository, name: sealed-secrets}}}}
`,
    'infra/configs/kustomization.yaml': 'resources:\n  - issuer.yaml\n',
    'infra/configs/issuer.yaml': `apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata: {name: '\${ISSUER_NAME}'}
spec:
  acme:
    email: '\${LE_EMAIL}'
    server: https://acme-v02.api.letsencrypt.org/directory
    privateKeySecretRef: {name: corp-acme-account}
    solvers: [{dns01: {route53: {region: '\${AWS_REGION}'}}}]
`,
    'apps/base/shop/kustomization.yaml':
      'resources:\n  - deployment.yaml\n  - ingress.yaml\n  - volume.yaml\n  - motd.yaml\n',
    'apps/base/shop/deployment.yaml': deployment('shop'),
    'apps/base/shop/ingress.yaml': ingress('shop', ["'shop.${SECRET_DOMAIN}'", "'api.shop.${SECRET_DOMAIN}'"]),
    'apps/base/shop/volume.yaml': `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: shop-db}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: '\${DB_SIZE:=10Gi}'}}}
`,
    'apps/base/shop/motd.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: shop-motd
  annotations: {kustomize.toolkit.fluxcd.io/substitute: disabled}
data: {motd: 'Welcome to \${SHOP_TITLE}, rendered by the app itself'}
`,
    ...(opts.generatedApps
      ? GENERATED_APPS
      : { 'apps/staging/kustomization.yaml': 'namespace: shop\nresources:\n  - ../base/shop\n' }),
  });
}

/**
 * apps/staging as a folder Flux generates the kustomization of (no kustomization.yaml): the shop
 * in a subfolder with its own kustomization (one resource, not descended into), a plain manifest
 * beside it, one further down, and a file that is not YAML. It also applies a nested Flux
 * Kustomization, shop-extras (./apps/extras, no kustomization.yaml either), on which the
 * environment's smoke Kustomization depends.
 */
const GENERATED_APPS: Record<string, string> = {
  'apps/staging/shop/kustomization.yaml': 'namespace: shop\nresources:\n  - ../../base/shop\n',
  'apps/staging/banner.yaml': `apiVersion: v1
kind: ConfigMap
metadata: {name: shop-banner, namespace: shop}
data: {text: 'Shop on \${SECRET_DOMAIN}'}
`,
  'apps/staging/limits/quota.yaml': `apiVersion: v1
kind: ResourceQuota
metadata: {name: shop-quota, namespace: shop}
spec: {hard: {pods: '20'}}
`,
  'apps/staging/NOTES.md': 'Applied by the apps Kustomization; Flux skips this file.\n',
  'apps/staging/extras.yaml': fluxKustomization('shop-extras', './apps/extras', {
    dependsOn: [{ name: 'apps' }],
    postBuild: settingsFrom,
  }),
  'apps/extras/greeting.yaml': `apiVersion: v1
kind: ConfigMap
metadata: {name: shop-greeting, namespace: shop}
data: {text: 'Hello from \${CLUSTER}'}
`,
  'clusters/staging/smoke.yaml': fluxKustomization('smoke', './apps/smoke', { dependsOn: [{ name: 'shop-extras' }] }),
  'apps/smoke/check.yaml': `apiVersion: v1
kind: ConfigMap
metadata: {name: shop-smoke, namespace: shop}
data: {url: 'https://shop.example'}
`,
};

/** The dev value of the supplied credential in writeSuppliedReference (test data: must never reach an output). */
export const SUPPLIED_PLANTED = 'dev-dns-provider-token-0f0f0f';

/**
 * The shipped template plus a DNS provider's API token Secret in the database layer (namespace data):
 * a credential only its issuer can create, annotated as supplied, with a webhook URL derived from it.
 */
export function writeSuppliedReference(root: string) {
  cpSync(SHIPPED_TEMPLATE, root, { recursive: true });
  const db = `${root}/clusters/development/database`;
  writeFileSync(
    `${db}/dns-provider.yaml`,
    `apiVersion: v1
kind: Secret
metadata:
  name: dns-provider
  annotations:
    gitops-scaffolder.io/supplied: api-token
stringData:
  api-token: ${SUPPLIED_PLANTED}
  webhook: https://hooks.example.com/dns?token=${SUPPLIED_PLANTED}
`,
  );
  writeFileSync(
    `${db}/kustomization.yaml`,
    readFileSync(`${db}/kustomization.yaml`, 'utf8').replace(
      '  - namespace.yaml',
      '  - namespace.yaml\n  - dns-provider.yaml',
    ),
  );
}
