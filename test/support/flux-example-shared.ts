/** The shared folders of the flux2-kustomize-helm-example layout (infrastructure/, apps/base), and the values they hold. */

export const EXAMPLE_HOSTS = {
  /** Not under any domain: needs --host-map. */
  podinfo: 'podinfo.staging',
  /** Under the reference domain (external-dns's domain filter). */
  api: 'api.staging.example.net',
  wildcard: '*.staging.example.net',
  /** Set only by the shared base (reaches the overlay through it). */
  status: 'status.staging.example.net',
};
export const EXAMPLE_ACME_EMAIL = 'fluxcdbot@users.noreply.github.com';
export const EXAMPLE_ACME_SERVER = 'https://acme-staging-v02.api.letsencrypt.org/directory';

/** infrastructure/{controllers,configs} and apps/base: the same for every environment. */
export const SHARED: Record<string, string> = {
  'infrastructure/controllers/kustomization.yaml':
    'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - cert-manager.yaml\n  - external-dns.yaml\n',
  'infrastructure/controllers/cert-manager.yaml': `apiVersion: v1
kind: Namespace
metadata:
  name: cert-manager
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: cert-manager
  namespace: cert-manager
spec:
  interval: 12h
  chart:
    spec:
      chart: cert-manager
      version: "1.x"
      sourceRef:
        kind: HelmRepository
        name: cert-manager
  values:
    installCRDs: true
`,
  'infrastructure/controllers/external-dns.yaml': `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: external-dns
  namespace: external-dns
spec:
  interval: 12h
  chart:
    spec:
      chart: external-dns
      sourceRef:
        kind: HelmRepository
        name: external-dns
  values:
    provider: aws
    domainFilters:
      - staging.example.net
    txtOwnerId: staging
    aws:
      region: eu-west-1
`,
  'infrastructure/configs/kustomization.yaml':
    'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - cluster-issuers.yaml\n  - gateway.yaml\n',
  'infrastructure/configs/cluster-issuers.yaml': `apiVersion: cert-manager.io/v1
kind: ClusterIssuer
metadata:
  name: letsencrypt
spec:
  acme:
    # Replace the email address with your own contact email
    email: ${EXAMPLE_ACME_EMAIL}
    # The server is replaced in /clusters/production/infrastructure.yaml
    server: https://acme-staging-v02.api.letsencrypt.org/directory
    privateKeySecretRef:
      name: letsencrypt-nginx
    solvers:
      - http01:
          ingress:
            class: nginx
`,
  'infrastructure/configs/gateway.yaml': `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: public
  namespace: gateway
spec:
  gatewayClassName: nginx
  listeners:
    - name: https
      protocol: HTTPS
      port: 443
      hostname: "${EXAMPLE_HOSTS.wildcard}"
`,
  'apps/base/podinfo/kustomization.yaml':
    'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - namespace.yaml\n  - repository.yaml\n  - release.yaml\n  - status-route.yaml\n',
  'apps/base/podinfo/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: podinfo\n',
  'apps/base/podinfo/repository.yaml': `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata:
  name: podinfo
  namespace: podinfo
spec:
  interval: 5m
  url: https://stefanprodan.github.io/podinfo
`,
  'apps/base/podinfo/release.yaml': `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: podinfo
  namespace: podinfo
spec:
  releaseName: podinfo
  chart:
    spec:
      chart: podinfo
      sourceRef:
        kind: HelmRepository
        name: podinfo
  interval: 50m
  values:
    ingress:
      enabled: true
      className: nginx
`,
  'apps/base/podinfo/status-route.yaml': `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: podinfo-status
  namespace: podinfo
spec:
  hostnames:
    - ${EXAMPLE_HOSTS.status}
  rules:
    - backendRefs:
        - name: podinfo
          port: 9898
`,
};
