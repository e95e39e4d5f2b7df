import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { scaffoldJob } from '#libs/kube/job-spec';
import { helmLint, helmTemplate, helmTemplateError, Rendered } from '../support/helm';

/** Every object the chart renders, through the real helm binary (4.x). */
const kinds = (objects: Rendered[], kind: string, name?: string) =>
  objects.filter((o) => o.obj.kind === kind && (!name || o.obj.metadata.name === name)).map((o) => o.obj);
const one = (objects: Rendered[], kind: string, name?: string) => {
  const found = kinds(objects, kind, name);
  if (found.length !== 1) throw new Error(`expected one ${kind} ${name ?? ''}, found ${found.length}`);
  return found[0];
};
const serviceContainer = (objects: Rendered[]) => one(objects, 'Deployment').spec.template.spec.containers[0];
const DNS_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const matches = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);
/** A run's Job as the service builds it from the settings the chart gives it. */
const runnerJob = (objects: Rendered[]) => {
  const cm = one(objects, 'ConfigMap', 'release-gitops-scaffolder').data;
  return scaffoldJob('11111111-2222-4333-8444-555555555555', {
    namespace: cm.JOB_NAMESPACE,
    image: cm.RUNNER_IMAGE,
    serviceAccountName: cm.JOB_SERVICE_ACCOUNT,
    configMapName: cm.JOB_CONFIGMAP,
    envSecretNames: [cm.JOB_ENV_SECRETS],
    gitSecretName: cm.JOB_GIT_SECRET,
    serviceUrl: cm.RUNNER_SERVICE_URL,
    backoffLimit: Number(cm.JOB_BACKOFF_LIMIT),
    activeDeadlineSeconds: Number(cm.JOB_ACTIVE_DEADLINE_SECONDS),
    ttlSecondsAfterFinished: Number(cm.JOB_TTL_SECONDS),
  });
};

/** Values that differ from every default the chart has, to render each conditional branch. */
const CUSTOM = {
  replicaCount: 3,
  image: { repository: 'registry.corp/scaffolder', tag: '9.9.9', pullPolicy: 'Always' },
  runnerImage: { repository: 'registry.corp/scaffolder-runner', tag: '9.9.9' },
  imagePullSecrets: [{ name: 'corp-registry' }, { name: 'mirror' }],
  nodeSelector: { 'node-role.kubernetes.io/platform': 'true' },
  tolerations: [{ key: 'platform', operator: 'Exists', effect: 'NoSchedule' }],
  affinity: {
    podAntiAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [
        {
          weight: 100,
          podAffinityTerm: {
            topologyKey: 'kubernetes.io/hostname',
            labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'gitops-scaffolder' } },
          },
        },
      ],
    },
  },
  podAnnotations: { 'prometheus.io/scrape': 'true' },
  podLabels: { team: 'platform' },
  extraEnv: [{ name: 'NATS_CREDS', value: '/var/run/secrets/nats/service.creds' }],
  serviceAccount: { annotations: { 'iam.gke.io/gcp-service-account': 'scaffolder@corp.iam.gserviceaccount.com' } },
  kubeconfigSecretNamespaces: [
    { namespace: 'capi-clusters', secretNames: ['acme-prod-kubeconfig', 'beta-kubeconfig'] },
    'kubeconfigs-only',
  ],
  credentialsSecretNamespaces: [{ namespace: 'customer-secrets', secretNames: ['acme-credentials'] }],
  secrets: { service: 'scaffolder-service', runner: 'scaffolder-runner', git: '', apiKeysFile: 'scaffolder-api-keys' },
  jobs: { serviceUrl: 'https://scaffolder.corp.example/runner', networkPolicy: { egressPorts: [443] } },
  probes: {
    liveness: { periodSeconds: 30, failureThreshold: 4 },
    readiness: { periodSeconds: 5, failureThreshold: 2 },
  },
};

describe('Helm chart, default values (helm template and helm lint --strict)', () => {
  let objects: Rendered[];
  beforeAll(async () => (objects = await helmTemplate()));

  it('passes helm lint --strict, values.schema.json included', async () => {
    expect(await helmLint()).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  it('labels every object (RBAC and the hook Job included) the way Helm charts do, with valid names', () => {
    expect(objects.length).toBeGreaterThanOrEqual(10);
    for (const { obj } of objects) {
      expect(obj.metadata.name).toMatch(DNS_NAME);
      expect(obj.metadata.name.length).toBeLessThanOrEqual(63);
      expect(obj.metadata.labels).toMatchObject({
        'helm.sh/chart': 'gitops-scaffolder-0.2.0',
        'app.kubernetes.io/name': 'gitops-scaffolder',
        'app.kubernetes.io/instance': 'release',
        'app.kubernetes.io/version': '0.1.0',
        'app.kubernetes.io/managed-by': 'Helm',
      });
    }
  });

  it('has a hardened Deployment: liveness on /livez (process only), readiness on /readyz (NATS and PostgreSQL), image tag = appVersion', () => {
    const d = one(objects, 'Deployment');
    expect(d.spec.replicas).toBe(1);
    const c = serviceContainer(objects);
    expect(c.image).toBe('ghcr.io/kubeopera/gitops-scaffolder:0.1.0');
    expect(c.livenessProbe.httpGet.path).toBe('/livez');
    expect(c.readinessProbe.httpGet.path).toBe('/readyz');
    expect(c.startupProbe.httpGet.path).toBe('/livez');
    expect(c.resources).toEqual({ requests: { cpu: '100m', memory: '256Mi' }, limits: { cpu: '1', memory: '512Mi' } });
    expect(d.spec.template.spec.securityContext.runAsNonRoot).toBe(true);
    expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
    expect(c.envFrom).toContainEqual({ secretRef: { name: 'gitops-scaffolder' } });
    expect(c.env.every((e: any) => !/KEY|PASSWORD|DATABASE_URL/.test(e.name))).toBe(true);
    expect(matches(d.spec.selector.matchLabels, d.spec.template.metadata.labels)).toBe(true);
    expect(d.spec.template.metadata.annotations['checksum/config']).toMatch(/^[0-9a-f]{64}$/);
    expect(kinds(objects, 'PodDisruptionBudget')).toEqual([]);
  });

  it('migrates once per release in a pre-install/pre-upgrade hook Job, and the replicas skip migrations', () => {
    const job = one(objects, 'Job');
    expect(job.metadata.name).toBe('release-gitops-scaffolder-migrate');
    expect(job.metadata.annotations).toMatchObject({
      'helm.sh/hook': 'pre-install,pre-upgrade',
      'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
    });
    const pod = job.spec.template.spec;
    expect(pod.containers[0].command).toEqual(['node', 'dist/src/migrate.js']);
    expect(pod.containers[0].image).toBe(serviceContainer(objects).image);
    expect(pod.containers[0].envFrom).toEqual([{ secretRef: { name: 'gitops-scaffolder' } }]);
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(serviceContainer(objects).env).toContainEqual({ name: 'MIGRATIONS_RUN', value: 'false' });
    // The Service must not send API traffic to the migration pod, which carries the release's labels too.
    expect(matches(one(objects, 'Service').spec.selector, job.spec.template.metadata.labels)).toBe(false);
    expect(
      matches(one(objects, 'Service').spec.selector, one(objects, 'Deployment').spec.template.metadata.labels),
    ).toBe(true);
  });

  it('by default: Secrets only in the chart-readable namespace, no API keys file', () => {
    const config = one(objects, 'ConfigMap', 'release-gitops-scaffolder');
    expect(config.data.SECRET_NAMESPACES).toBe('capi-clusters');
    expect(config.data).not.toHaveProperty('API_KEYS_FILE');
    expect(serviceContainer(objects).volumeMounts.map((m: any) => m.name)).not.toContain('api-keys');
  });

  it('mounts the git Secret into the service as GIT_CREDENTIALS_DIR (private to the user) and passes the git settings to both', () => {
    const d = one(objects, 'Deployment');
    const c = serviceContainer(objects);
    expect(c.volumeMounts.find((m: any) => m.name === 'git-credentials')).toEqual({
      name: 'git-credentials',
      mountPath: '/var/run/secrets/git',
      readOnly: true,
    });
    expect(c.env).toContainEqual({ name: 'GIT_CREDENTIALS_DIR', value: '/var/run/secrets/git' });
    expect(d.spec.template.spec.volumes).toContainEqual({
      name: 'git-credentials',
      secret: { secretName: 'gitops-scaffolder-git', defaultMode: 0o400 },
    });
    for (const cm of kinds(objects, 'ConfigMap'))
      expect(Object.keys(cm.data)).toEqual(expect.arrayContaining(['GIT_CREDENTIALS_HOSTS', 'GIT_CA_FILE']));
  });

  it('gives a stopping pod longer than the service gives its in-flight steps', () => {
    const cm = one(objects, 'ConfigMap', 'release-gitops-scaffolder');
    expect(cm.data.SHUTDOWN_GRACE_SECONDS).toBe('25');
    expect(one(objects, 'Deployment').spec.template.spec.terminationGracePeriodSeconds).toBe(40);
  });

  it('grants the service only the Job verbs its code uses, in the provisioning namespace, under release-scoped names', () => {
    const role = one(objects, 'Role', 'release-gitops-scaffolder-jobs');
    expect(role.metadata.namespace).toBe('kubeopera-provisioning');
    expect(role.rules).toEqual([
      { apiGroups: ['batch'], resources: ['jobs'], verbs: ['create', 'get', 'list'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
      { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
      // Each run's runner credential: created with the Job, read back on a relaunch, removed with the Job.
      { apiGroups: [''], resources: ['secrets'], verbs: ['create', 'get'] },
    ]);
    // Never list (every run's credential at once), update or delete Secrets there.
    const secretVerbs = role.rules.filter((r: any) => r.resources.includes('secrets')).flatMap((r: any) => r.verbs);
    expect(secretVerbs.sort()).toEqual(['create', 'get']);
    expect(one(objects, 'RoleBinding', 'release-gitops-scaffolder-jobs').subjects).toEqual([
      { kind: 'ServiceAccount', name: 'release-gitops-scaffolder', namespace: 'kubeopera-core' },
    ]);
  });

  it('lets only the runner read kubeconfig Secrets, and the service (check at POST) and the runner (use) read supplied credentials', () => {
    const kubeconfig = one(objects, 'Role', 'release-gitops-scaffolder-kubeconfig-reader');
    expect(kubeconfig.metadata.namespace).toBe('capi-clusters');
    expect(kubeconfig.rules).toEqual([{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]);
    expect(one(objects, 'RoleBinding', 'release-gitops-scaffolder-kubeconfig-reader').subjects).toEqual([
      { kind: 'ServiceAccount', name: 'release-gitops-scaffolder-runner', namespace: 'kubeopera-provisioning' },
    ]);
    const credentials = one(objects, 'Role', 'release-gitops-scaffolder-credentials-reader');
    expect(credentials.rules).toEqual([{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]);
    expect(one(objects, 'RoleBinding', 'release-gitops-scaffolder-credentials-reader').subjects).toEqual([
      { kind: 'ServiceAccount', name: 'release-gitops-scaffolder', namespace: 'kubeopera-core' },
      { kind: 'ServiceAccount', name: 'release-gitops-scaffolder-runner', namespace: 'kubeopera-provisioning' },
    ]);
  });

  it('configures the executor, the runner image (appVersion) and the runner account and ConfigMap it renders', () => {
    const cm = one(objects, 'ConfigMap', 'release-gitops-scaffolder');
    expect(cm.data.EXECUTOR).toBe('kubernetes');
    expect(cm.data.RUNNER_IMAGE).toBe('ghcr.io/kubeopera/gitops-scaffolder-runner:0.1.0');
    expect(cm.data.JOB_IMAGE_PULL_SECRETS).toBe('');
    expect(one(objects, 'ServiceAccount', cm.data.JOB_SERVICE_ACCOUNT).metadata.namespace).toBe(
      'kubeopera-provisioning',
    );
    expect(one(objects, 'ConfigMap', cm.data.JOB_CONFIGMAP).metadata.namespace).toBe('kubeopera-provisioning');
  });

  it("tells the service where its runner Jobs reach it: this release's Service, by its in-cluster name and port", () => {
    const cm = one(objects, 'ConfigMap', 'release-gitops-scaffolder');
    const service = one(objects, 'Service', 'release-gitops-scaffolder');
    expect(cm.data.RUNNER_SERVICE_URL).toBe(
      `http://${service.metadata.name}.kubeopera-core.svc:${service.spec.ports[0].port}`,
    );
  });

  it("lets the runner Jobs' pods reach DNS, the service's pods on their port, and git and the API servers, not NATS", () => {
    const policy = one(objects, 'NetworkPolicy', 'release-gitops-scaffolder-runner');
    const job = runnerJob(objects);
    expect(policy.metadata.namespace).toBe(job.metadata!.namespace);
    expect(matches(policy.spec.podSelector.matchLabels, job.spec!.template.metadata!.labels!)).toBe(true);
    expect(policy.spec.policyTypes).toEqual(['Egress']);
    const service = one(objects, 'Service', 'release-gitops-scaffolder');
    expect(policy.spec.egress).toEqual([
      {
        to: [{ namespaceSelector: {} }],
        ports: [
          { protocol: 'UDP', port: 53 },
          { protocol: 'TCP', port: 53 },
        ],
      },
      {
        to: [
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kubeopera-core' } },
            podSelector: { matchLabels: service.spec.selector },
          },
        ],
        ports: [{ protocol: 'TCP', port: 8080 }],
      },
      { ports: [443, 22, 6443].map((port) => ({ protocol: 'TCP', port })) },
    ]);
    // The runner API: the service's pods (not the hook Job's) on the port their container listens on.
    const pod = one(objects, 'Deployment').spec.template;
    expect(matches(service.spec.selector, pod.metadata.labels)).toBe(true);
    expect(serviceContainer(objects).ports).toEqual([{ name: 'http', containerPort: 8080 }]);
    expect(policy.spec.egress.flatMap((rule: any) => rule.ports.map((p: any) => p.port))).not.toContain(4222);
  });

  it('gives the service (which checks cluster_vars) and the runner Jobs (which generate) the same reference, one the image holds', () => {
    const service = one(objects, 'ConfigMap', 'release-gitops-scaffolder').data;
    const runner = one(objects, 'ConfigMap', 'release-gitops-scaffolder-runner').data;
    expect({ TEMPLATE_DIR: runner.TEMPLATE_DIR, REFERENCE_ENV: runner.REFERENCE_ENV }).toEqual({
      TEMPLATE_DIR: service.TEMPLATE_DIR,
      REFERENCE_ENV: service.REFERENCE_ENV,
    });
    // Both Dockerfiles copy templates/ to /app/templates.
    expect(service.TEMPLATE_DIR).toMatch(/^\/app\//);
    expect(
      existsSync(
        join(__dirname, '../..', service.TEMPLATE_DIR.slice('/app/'.length), 'clusters', service.REFERENCE_ENV),
      ),
    ).toBe(true);
  });
});

describe('Helm chart, non-default values', () => {
  let objects: Rendered[];
  beforeAll(async () => (objects = await helmTemplate(CUSTOM, 'fleet')));

  it('passes helm lint --strict with every optional value set', async () => {
    expect(await helmLint(CUSTOM)).toMatch(/0 chart\(s\) failed/);
  });

  it('schedules, pulls and annotates the service and the hook Job as asked, and hands the pull secrets to the runner Jobs', () => {
    for (const pod of [one(objects, 'Deployment').spec.template, one(objects, 'Job').spec.template]) {
      expect(pod.spec.nodeSelector).toEqual(CUSTOM.nodeSelector);
      expect(pod.spec.tolerations).toEqual(CUSTOM.tolerations);
      expect(pod.spec.affinity).toEqual(CUSTOM.affinity);
      expect(pod.spec.imagePullSecrets).toEqual(CUSTOM.imagePullSecrets);
      expect(pod.spec.containers[0].image).toBe('registry.corp/scaffolder:9.9.9');
    }
    const template = one(objects, 'Deployment').spec.template;
    expect(template.metadata.annotations).toMatchObject(CUSTOM.podAnnotations);
    expect(template.metadata.labels).toMatchObject(CUSTOM.podLabels);
    const c = template.spec.containers[0];
    expect(c.imagePullPolicy).toBe('Always');
    expect(c.env).toContainEqual(CUSTOM.extraEnv[0]);
    expect(c.livenessProbe).toMatchObject({ periodSeconds: 30, failureThreshold: 4 });
    expect(c.readinessProbe).toMatchObject({ periodSeconds: 5, failureThreshold: 2 });
    const cm = one(objects, 'ConfigMap', 'fleet-gitops-scaffolder');
    expect(cm.data.JOB_IMAGE_PULL_SECRETS).toBe('corp-registry,mirror');
    expect(cm.data.RUNNER_IMAGE).toBe('registry.corp/scaffolder-runner:9.9.9');
    expect(one(objects, 'ServiceAccount', 'fleet-gitops-scaffolder').metadata.annotations).toEqual(
      CUSTOM.serviceAccount.annotations,
    );
  });

  it('hands the runner Jobs jobs.serviceUrl as the way to the service, and opens only the egress ports asked for', () => {
    expect(one(objects, 'ConfigMap', 'fleet-gitops-scaffolder').data.RUNNER_SERVICE_URL).toBe(
      'https://scaffolder.corp.example/runner',
    );
    const policy = one(objects, 'NetworkPolicy', 'fleet-gitops-scaffolder-runner');
    expect(policy.spec.egress.at(-1)).toEqual({ ports: [{ protocol: 'TCP', port: 443 }] });
  });

  it('renders no NetworkPolicy for runner Jobs when it is disabled, nor with executor local (no Jobs)', async () => {
    const disabled = await helmTemplate({ jobs: { networkPolicy: { enabled: false } } });
    expect(kinds(disabled, 'NetworkPolicy')).toEqual([]);
    const local = await helmTemplate({ config: { executor: 'local', natsUrl: 'nats://nats:4222' } });
    expect(kinds(local, 'NetworkPolicy')).toEqual([]);
  });

  it('adds a PodDisruptionBudget over the service pods (not the hook Job) with more than one replica', () => {
    const pdb = one(objects, 'PodDisruptionBudget');
    expect(pdb.spec.minAvailable).toBe(1);
    expect(matches(pdb.spec.selector.matchLabels, one(objects, 'Deployment').spec.template.metadata.labels)).toBe(true);
    expect(matches(pdb.spec.selector.matchLabels, one(objects, 'Job').spec.template.metadata.labels)).toBe(false);
  });

  it('lets requests name Secrets only in the namespaces the chart lets the scaffolder read, and mounts the scoped keys file', () => {
    const config = one(objects, 'ConfigMap', 'fleet-gitops-scaffolder');
    expect(config.data).toMatchObject({
      SECRET_NAMESPACES: 'capi-clusters,kubeconfigs-only,customer-secrets',
      API_KEYS_FILE: '/var/run/secrets/api-keys/keys.yaml',
    });
    expect(serviceContainer(objects).volumeMounts).toContainEqual({
      name: 'api-keys',
      mountPath: '/var/run/secrets/api-keys',
      readOnly: true,
    });
    expect(one(objects, 'Deployment').spec.template.spec.volumes).toContainEqual({
      name: 'api-keys',
      secret: {
        secretName: 'scaffolder-api-keys',
        items: [{ key: 'keys.yaml', path: 'keys.yaml' }],
        defaultMode: 0o400,
      },
    });
  });

  it('limits Secret reads to the named Secrets where names are given, namespace-wide where only a namespace is', () => {
    const readers = kinds(objects, 'Role').filter(
      (r) => r.metadata.name === 'fleet-gitops-scaffolder-kubeconfig-reader',
    );
    expect(readers.map((r) => [r.metadata.namespace, r.rules])).toEqual([
      [
        'capi-clusters',
        [
          {
            apiGroups: [''],
            resources: ['secrets'],
            verbs: ['get'],
            resourceNames: ['acme-prod-kubeconfig', 'beta-kubeconfig'],
          },
        ],
      ],
      ['kubeconfigs-only', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]],
    ]);
    const credentials = one(objects, 'Role', 'fleet-gitops-scaffolder-credentials-reader');
    expect([credentials.metadata.namespace, credentials.rules[0].resourceNames]).toEqual([
      'customer-secrets',
      ['acme-credentials'],
    ]);
  });

  it('without a git Secret mounts none; a changed setting changes the config checksum (pods roll)', async () => {
    const c = serviceContainer(objects);
    expect(c.volumeMounts.map((m: any) => m.name)).toEqual(['work', 'tmp', 'api-keys']);
    expect(c.env.map((e: any) => e.name)).not.toContain('GIT_CREDENTIALS_DIR');
    const changed = await helmTemplate(
      { ...CUSTOM, config: { executor: 'kubernetes', natsUrl: 'nats://other:4222' } },
      'fleet',
    );
    const checksum = (o: Rendered[]) => one(o, 'Deployment').spec.template.metadata.annotations['checksum/config'];
    expect(checksum(changed)).not.toBe(checksum(objects));
    expect(checksum(await helmTemplate(CUSTOM, 'fleet'))).toBe(checksum(objects));
  });

  it("tells the service the cores of its CPU limit (Node counts the node's), from which it sizes its generator threads", () => {
    expect(serviceContainer(objects).env).toContainEqual({
      name: 'CPU_LIMIT',
      valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1' } },
    });
  });

  it('runs every role by default; a release of API replicas and one of workers say so to the service', async () => {
    expect(one(await helmTemplate({}), 'ConfigMap', 'release-gitops-scaffolder').data.SERVICE_ROLE).toBe('all');
    const rendered = async (serviceRole: string) =>
      helmTemplate({ config: { executor: 'kubernetes', natsUrl: 'nats://n:4222', serviceRole } });
    const [apiRelease, workerRelease] = [await rendered('api'), await rendered('worker')];
    expect(one(apiRelease, 'ConfigMap', 'release-gitops-scaffolder').data.SERVICE_ROLE).toBe('api');
    expect(one(workerRelease, 'ConfigMap', 'release-gitops-scaffolder').data.SERVICE_ROLE).toBe('worker');
    // The API release starts no Jobs and mints no runner credentials: it may only read the Jobs' pods' logs.
    expect(one(apiRelease, 'Role', 'release-gitops-scaffolder-jobs').rules).toEqual([
      { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
      { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
    ]);
    expect(kinds(apiRelease, 'NetworkPolicy')).toEqual([]);
    expect(one(workerRelease, 'Role', 'release-gitops-scaffolder-jobs').rules).toEqual(
      one(await helmTemplate({}), 'Role', 'release-gitops-scaffolder-jobs').rules,
    );
    expect(kinds(workerRelease, 'NetworkPolicy')).toHaveLength(1);
  });

  it('gives an API release no runner account and no Secret reads but the credentials check at POST', async () => {
    const release = (serviceRole: string, executor: string) =>
      helmTemplate({
        config: { executor, natsUrl: 'nats://n:4222', serviceRole },
        kubeconfigSecretNamespaces: [{ namespace: 'capi-clusters', secretNames: ['acme-kubeconfig'] }],
        credentialsSecretNamespaces: [{ namespace: 'customer-secrets', secretNames: ['acme-credentials'] }],
      });
    const bindings = (objects: any[]) =>
      Object.fromEntries(
        kinds(objects, 'RoleBinding')
          .filter((b) => b.metadata.name.endsWith('-reader'))
          .map((b) => [b.metadata.name, b.subjects.map((s: any) => s.name)]),
      );
    for (const executor of ['kubernetes', 'local']) {
      const api = await release('api', executor);
      expect(kinds(api, 'ServiceAccount').map((a) => a.metadata.name)).toEqual(['release-gitops-scaffolder']);
      expect(bindings(api)).toEqual({ 'release-gitops-scaffolder-credentials-reader': ['release-gitops-scaffolder'] });
      expect(kinds(api, 'Role').map((r) => r.metadata.name)).not.toContain(
        'release-gitops-scaffolder-kubeconfig-reader',
      );
    }
    // A worker release is granted what a release of every role is.
    for (const executor of ['kubernetes', 'local'])
      expect(bindings(await release('worker', executor))).toEqual(bindings(await release('all', executor)));
    expect(bindings(await release('worker', 'kubernetes'))).toEqual({
      'release-gitops-scaffolder-kubeconfig-reader': ['release-gitops-scaffolder-runner'],
      'release-gitops-scaffolder-credentials-reader': ['release-gitops-scaffolder', 'release-gitops-scaffolder-runner'],
    });
  });

  it('with executor local: no Job permissions, and the service itself reads the kubeconfig Secrets', async () => {
    const local = await helmTemplate({ config: { executor: 'local', natsUrl: 'nats://nats:4222' } });
    expect(kinds(local, 'Role').map((r) => r.metadata.name)).not.toContain('release-gitops-scaffolder-jobs');
    expect(
      one(local, 'RoleBinding', 'release-gitops-scaffolder-kubeconfig-reader').subjects.map((s: any) => s.name),
    ).toEqual(['release-gitops-scaffolder', 'release-gitops-scaffolder-runner']);
  });

  it('gives the service its NATS identity from a Secret and PostgreSQL its CA; the runner Jobs get no NATS settings', async () => {
    const secured = await helmTemplate({
      nats: {
        serviceSecret: 'nats-service',
        passwordFile: '/var/run/secrets/nats/password',
        tlsCaFile: '/var/run/secrets/nats/ca.crt',
        user: { service: 'scaffolder-service' },
      },
      database: { sslCaSecret: 'postgres-ca' },
    });
    const service = one(secured, 'ConfigMap', 'release-gitops-scaffolder').data;
    const runner = one(secured, 'ConfigMap', 'release-gitops-scaffolder-runner').data;
    expect(service).toMatchObject({
      NATS_USER: 'scaffolder-service',
      NATS_PASSWORD_FILE: '/var/run/secrets/nats/password',
      NATS_TLS_CA: '/var/run/secrets/nats/ca.crt',
      NATS_INBOX_PREFIX: '_INBOX_scaffolder',
      DATABASE_SSL_CA: '/var/run/secrets/postgres/ca.crt',
    });
    // The runner reads and reports its run through the service's runner API: no NATS login, no stream settings.
    expect(Object.keys(runner).filter((k) => k.startsWith('NATS_') || k === 'STREAM_REPLICAS')).toEqual([]);
    expect(JSON.stringify(secured.map((r) => r.obj))).not.toMatch(/JOB_NATS_SECRET/);
    expect(Object.values({ ...service, ...runner }).join(' ')).not.toMatch(/scaffolder-service-password/);
    const pod = one(secured, 'Deployment').spec.template.spec;
    expect(pod.containers[0].volumeMounts).toEqual(
      expect.arrayContaining([
        { name: 'nats-identity', mountPath: '/var/run/secrets/nats', readOnly: true },
        { name: 'postgres-ca', mountPath: '/var/run/secrets/postgres', readOnly: true },
      ]),
    );
    expect(pod.volumes).toContainEqual({
      name: 'nats-identity',
      secret: { secretName: 'nats-service', defaultMode: 0o400 },
    });
    const migrate = one(secured, 'Job').spec.template.spec;
    expect(migrate.containers[0].env).toEqual([{ name: 'DATABASE_SSL_CA', value: '/var/run/secrets/postgres/ca.crt' }]);
  });

  it('with migrations.hookJob false: no hook Job, and the replicas migrate (under the advisory lock)', async () => {
    const noHook = await helmTemplate({ migrations: { hookJob: false } });
    expect(kinds(noHook, 'Job')).toEqual([]);
    expect(serviceContainer(noHook).env.map((e: any) => e.name)).not.toContain('MIGRATIONS_RUN');
  });

  it('keeps every name within 63 characters for a long release name, honours nameOverride and fullnameOverride', async () => {
    // Helm allows release names up to 53 characters; <release>-gitops-scaffolder-kubeconfig-reader would be 88.
    const longRelease = 'a-very-long-release-name-for-the-platform-teams-fleet';
    for (const rendered of [
      await helmTemplate({}, longRelease),
      await helmTemplate({ nameOverride: 'scaffolder' }),
      await helmTemplate({ fullnameOverride: 'gs' }),
    ]) {
      for (const { obj } of rendered) {
        expect(obj.metadata.name.length).toBeLessThanOrEqual(63);
        expect(obj.metadata.name).toMatch(DNS_NAME);
      }
      const d = one(rendered, 'Deployment');
      expect(matches(d.spec.selector.matchLabels, d.spec.template.metadata.labels)).toBe(true);
    }
    expect(one(await helmTemplate({ nameOverride: 'scaffolder' }), 'Deployment').metadata.name).toBe(
      'release-scaffolder',
    );
    const short = await helmTemplate({ fullnameOverride: 'gs' });
    expect(
      kinds(short, 'Role')
        .map((r) => r.metadata.name)
        .sort(),
    ).toEqual(['gs-credentials-reader', 'gs-jobs', 'gs-kubeconfig-reader']);
  });

  it('two releases in one cluster share no object name in any namespace', async () => {
    const key = (r: Rendered) => `${r.obj.kind}/${r.obj.metadata.namespace ?? 'kubeopera-core'}/${r.obj.metadata.name}`;
    const first = new Set((await helmTemplate({}, 'blue')).map(key));
    const second = (await helmTemplate({}, 'green')).map(key);
    expect(second.filter((k) => first.has(k))).toEqual([]);
  });

  it.each([
    [{ config: { executor: 'docker', natsUrl: 'nats://x:4222' } }, /executor/],
    [{ config: { executor: 'kubernetes', natsUrl: 'nats://x:4222', serviceRole: 'both' } }, /serviceRole/],
    [{ kubeconfigSecretNamespaces: ['Capi_Clusters'] }, /kubeconfigSecretNamespaces/],
    [{ replicaCount: 'three' }, /replicaCount/],
    [{ imagePullSecrets: ['corp-registry'] }, /imagePullSecrets/],
    [{ unknownSetting: true }, /unknownSetting/],
    // The runner's NATS identity is gone: an old values file naming it fails instead of being ignored.
    [{ nats: { runnerSecret: 'nats-runner' } }, /runnerSecret/],
    // What RUNNER_SERVICE_URL accepts (src/config/env.schema.ts): no credentials in the URL.
    [{ jobs: { serviceUrl: 'https://user:secret@scaffolder.corp.example' } }, /serviceUrl/],
    [{ jobs: { networkPolicy: { egressPorts: ['https'] } } }, /egressPorts/],
  ])('refuses values the schema rules out: %j', async (values, field) => {
    expect(await helmTemplateError(values)).toMatch(field);
  });

  it("refuses namespace-wide Secret reads in the Jobs' namespace (runners would read each other's credentials)", async () => {
    for (const key of ['kubeconfigSecretNamespaces', 'credentialsSecretNamespaces'])
      expect(await helmTemplateError({ [key]: ['kubeopera-provisioning'] })).toMatch(
        /lists the Jobs' namespace kubeopera-provisioning namespace-wide: every runner could read every run's credential Secret/,
      );
    // Named Secrets there are fine.
    const named = await helmTemplate({
      kubeconfigSecretNamespaces: [{ namespace: 'kubeopera-provisioning', secretNames: ['fleet-kubeconfig'] }],
    });
    expect(named.length).toBeGreaterThan(0);
  });
});
