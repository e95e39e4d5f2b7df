import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { renderChart } from '../support/helm-render';

const CHART = join(__dirname, '../../helm/gitops-scaffolder');

describe('Helm chart renders with default values', () => {
  const rendered = renderChart(CHART);
  const objects = [...rendered.entries()]
    .flatMap(([file, text]) =>
      parseAllDocuments(text).map((d: any) => {
        expect(d.errors).toEqual([]);
        return { file, obj: d.toJS() };
      }),
    )
    .filter((o) => o.obj);
  const find = (kind: string, name?: string) => objects.filter((o) => o.obj.kind === kind && (!name || o.obj.metadata.name === name)).map((o) => o.obj);

  it('renders every template into valid Kubernetes objects', () => {
    expect(rendered.size).toBeGreaterThanOrEqual(4);
    for (const { obj } of objects) {
      expect(obj.apiVersion).toBeTruthy();
      expect(obj.kind).toBeTruthy();
      expect(obj.metadata.name).toMatch(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
    }
  });

  it('has a hardened single-replica Deployment with /health probes, resources and secret references only', () => {
    const [d] = find('Deployment');
    expect(d.spec.replicas).toBe(1);
    const c = d.spec.template.spec.containers[0];
    expect(c.readinessProbe.httpGet.path).toBe('/health');
    expect(c.livenessProbe.httpGet.path).toBe('/health');
    expect(c.resources).toEqual({ requests: { cpu: '100m', memory: '256Mi' }, limits: { cpu: '1', memory: '512Mi' } });
    expect(d.spec.template.spec.securityContext.runAsNonRoot).toBe(true);
    expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
    expect(c.envFrom).toContainEqual({ secretRef: { name: 'gitops-scaffolder' } });
    expect(c.env.every((e: any) => !/KEY|PASSWORD|DATABASE_URL/.test(e.name))).toBe(true);
    expect(d.spec.selector.matchLabels).toEqual(d.spec.template.metadata.labels);
  });

  it('mounts the git Secret into the service as GIT_CREDENTIALS_DIR (private to the user) and passes the git settings to both', () => {
    const [d] = find('Deployment');
    const c = d.spec.template.spec.containers[0];
    const mount = c.volumeMounts.find((m: any) => m.name === 'git-credentials');
    expect(mount).toEqual({ name: 'git-credentials', mountPath: '/var/run/secrets/git', readOnly: true });
    expect(c.env).toContainEqual({ name: 'GIT_CREDENTIALS_DIR', value: '/var/run/secrets/git' });
    expect(d.spec.template.spec.volumes).toContainEqual({ name: 'git-credentials', secret: { secretName: 'gitops-scaffolder-git', defaultMode: 0o400 } });
    for (const cm of find('ConfigMap')) expect(Object.keys(cm.data)).toEqual(expect.arrayContaining(['GIT_CREDENTIALS_HOSTS', 'GIT_CA_FILE']));
  });

  it('gives a stopping pod longer than the service gives its in-flight steps', () => {
    const [d] = find('Deployment');
    const cm = find('ConfigMap').find((c: any) => c.data.SHUTDOWN_GRACE_SECONDS);
    expect(cm.data.SHUTDOWN_GRACE_SECONDS).toBe('25');
    expect(d.spec.template.spec.terminationGracePeriodSeconds).toBe(40);
  });

  it('grants the Job RBAC in kubeopera-provisioning and only Secret reads for kubeconfigs', () => {
    const role = find('Role', 'release-gitops-scaffolder-jobs')[0];
    expect(role.metadata.namespace).toBe('kubeopera-provisioning');
    expect(role.rules).toContainEqual({ apiGroups: ['batch'], resources: ['jobs'], verbs: ['create', 'get', 'list', 'watch', 'delete'] });
    expect(role.rules).toContainEqual({ apiGroups: [''], resources: ['pods', 'pods/log'], verbs: ['get', 'list'] });
    const reader = find('Role', 'gitops-scaffolder-kubeconfig-reader');
    expect(reader.map((r) => r.metadata.namespace)).toEqual(['capi-clusters']);
    expect(reader[0].rules).toEqual([{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]);
    const binding = find('RoleBinding', 'gitops-scaffolder-kubeconfig-reader')[0];
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'release-gitops-scaffolder-runner', namespace: 'kubeopera-provisioning' }]);
  });

  it('lets the service (check at POST) and the runner (use) read supplied-credentials Secrets, and nothing else there', () => {
    const reader = find('Role', 'gitops-scaffolder-credentials-reader');
    expect(reader.map((r) => r.metadata.namespace)).toEqual(['capi-clusters']);
    expect(reader[0].rules).toEqual([{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]);
    const binding = find('RoleBinding', 'gitops-scaffolder-credentials-reader')[0];
    expect(binding.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'release-gitops-scaffolder', namespace: expect.any(String) },
      { kind: 'ServiceAccount', name: 'release-gitops-scaffolder-runner', namespace: 'kubeopera-provisioning' },
    ]);
  });

  it('configures the executor and the pinned runner image', () => {
    const cm = find('ConfigMap', 'release-gitops-scaffolder')[0];
    expect(cm.data.EXECUTOR).toBe('kubernetes');
    expect(cm.data.RUNNER_IMAGE).toBe('ghcr.io/kubeopera/gitops-scaffolder-runner:0.1.0');
    expect(cm.data.JOB_SERVICE_ACCOUNT).toBe('release-gitops-scaffolder-runner');
    expect(find('ConfigMap', 'release-gitops-scaffolder-runner')[0].metadata.namespace).toBe('kubeopera-provisioning');
  });

  it('gives the service (which checks cluster_vars) and the runner Jobs (which generate) the same reference, one the image holds', () => {
    const service = find('ConfigMap', 'release-gitops-scaffolder')[0].data;
    const runner = find('ConfigMap', 'release-gitops-scaffolder-runner')[0].data;
    expect({ TEMPLATE_DIR: runner.TEMPLATE_DIR, REFERENCE_ENV: runner.REFERENCE_ENV }).toEqual({ TEMPLATE_DIR: service.TEMPLATE_DIR, REFERENCE_ENV: service.REFERENCE_ENV });
    // Both Dockerfiles copy templates/ to /app/templates.
    expect(service.TEMPLATE_DIR).toMatch(/^\/app\//);
    expect(existsSync(join(__dirname, '../..', service.TEMPLATE_DIR.slice('/app/'.length), 'clusters', service.REFERENCE_ENV))).toBe(true);
  });
});
