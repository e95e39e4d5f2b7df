import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PATH_METADATA } from '@nestjs/common/constants';
import { stringify } from 'yaml';
import { checkSchemas } from '#libs/generator/schema';
import { IS_PUBLIC } from '../../src/common/public.decorator';
import { MetricsController } from '../../src/metrics/metrics.controller';
import { DASHBOARD_FILE, dashboardJson, MONITORING_ON, renderedKind } from '../support/chart-monitoring';
import { tempDir } from '../support/files';
import { helmLint, helmTemplate, helmTemplateError, Rendered } from '../support/helm';
import { requiredTool } from '../support/tools';

const run = promisify(execFile);

async function promtool(args: string[], files: Record<string, unknown>): Promise<string> {
  const dir = tempDir('promtool');
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), stringify(content));
  try {
    const { stdout, stderr } = await run(requiredTool('promtool'), args, { cwd: dir });
    return stdout + stderr;
  } catch (e: any) {
    throw new Error(`promtool ${args.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? e.message}`, { cause: e });
  }
}

const MONITORING_KINDS = ['ServiceMonitor', 'PrometheusRule'];
const one = (objects: Rendered[], kind: string) => {
  const found = renderedKind(objects, kind);
  if (found.length !== 1) throw new Error(`expected one ${kind}, found ${found.length}`);
  return found[0].obj;
};
const dashboardConfigMaps = (objects: Rendered[]) =>
  renderedKind(objects, 'ConfigMap').filter((o) => o.obj.metadata.labels?.grafana_dashboard !== undefined);

/** This release's series as the ServiceMonitor's scrapes label them (job: the Service's name). */
const TARGET = { job: 'release-gitops-scaffolder', namespace: 'kubeopera-core' };
const series = (name: string, labels: Record<string, string>, values: string) => ({
  series: `${name}{${Object.entries({ ...TARGET, ...labels })
    .map(([k, v]) => `${k}="${v}"`)
    .join(',')}}`,
  values,
});

describe('Helm chart monitoring: off by default', () => {
  it('renders no ServiceMonitor, PrometheusRule or dashboard unless asked, and lints strictly with all three off', async () => {
    const objects = await helmTemplate({
      metrics: {
        serviceMonitor: { enabled: false },
        prometheusRule: { enabled: false },
        dashboard: { enabled: false },
      },
    });
    for (const kind of MONITORING_KINDS) expect(renderedKind(objects, kind)).toEqual([]);
    expect(dashboardConfigMaps(objects)).toEqual([]);
    expect(await helmLint({ metrics: { serviceMonitor: { enabled: false } } })).toMatch(/0 chart\(s\) failed/);
  });

  it('refuses unknown or malformed monitoring values (values.schema.json)', async () => {
    expect(await helmTemplateError({ metrics: { serviceMonitor: { enabled: true, port: 9090 } } })).toMatch(/port/);
    expect(await helmTemplateError({ metrics: { serviceMonitor: { enabled: true, interval: '30 s' } } })).toMatch(
      /interval/,
    );
    expect(await helmTemplateError({ metrics: { prometheusRule: { enabled: true, failureRatio: 2 } } })).toMatch(
      /failureRatio/,
    );
    expect(await helmTemplateError({ metrics: { dashboard: { enabled: true, namespace: 'Not_A_Name' } } })).toMatch(
      /namespace/,
    );
  });
});

describe('Helm chart monitoring: on', () => {
  let objects: Rendered[];
  beforeAll(async () => (objects = await helmTemplate(MONITORING_ON)));

  it('passes helm lint --strict and the Prometheus Operator and Kubernetes schemas, strictly', async () => {
    expect(await helmLint(MONITORING_ON)).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    const monitoring = [...MONITORING_KINDS.flatMap((k) => renderedKind(objects, k)), ...dashboardConfigMaps(objects)];
    expect(monitoring.length).toBe(3);
    const check = checkSchemas(
      monitoring.map((o) => ({ body: o.obj, file: o.source })),
      'the chart',
    );
    expect(check).toEqual({ checked: 3, withoutSchema: [], warnings: [] });
  });

  it('scrapes the Service the chart renders, on the path and port the service serves /metrics without a key', () => {
    const monitor = one(objects, 'ServiceMonitor');
    const service = one(objects, 'Service');
    expect(monitor.metadata.labels.release).toBe('kube-prometheus-stack');
    expect(monitor.spec.namespaceSelector).toEqual({ matchNames: ['kubeopera-core'] });
    for (const [k, v] of Object.entries(monitor.spec.selector.matchLabels)) expect(service.metadata.labels[k]).toBe(v);
    // The hook Job carries the release's labels but has no Service; only this one is selected.
    expect(monitor.spec.selector.matchLabels['app.kubernetes.io/component']).toBe('service');
    const [endpoint] = monitor.spec.endpoints;
    expect(service.spec.ports.map((p: any) => p.name)).toContain(endpoint.port);
    expect(endpoint).toMatchObject({ path: '/metrics', scheme: 'http', interval: '30s', scrapeTimeout: '10s' });
    // The path and the absence of credentials are the code's: @Get('metrics') on a root controller, @Public().
    expect(`/${Reflect.getMetadata(PATH_METADATA, MetricsController.prototype.scrape)}`).toBe(endpoint.path);
    expect(Reflect.getMetadata(PATH_METADATA, MetricsController)).toBe('/');
    expect(Reflect.getMetadata(IS_PUBLIC, MetricsController.prototype.scrape)).toBe(true);
    expect(endpoint.bearerTokenSecret).toBeUndefined();
  });

  it('ships the dashboard file as is, for the Grafana sidecar, in the namespace it looks in', () => {
    const [{ obj: cm }] = dashboardConfigMaps(objects);
    expect(cm.metadata).toMatchObject({
      name: 'release-gitops-scaffolder-dashboard',
      namespace: 'monitoring',
      labels: { grafana_dashboard: '1', 'app.kubernetes.io/instance': 'release' },
      annotations: { grafana_folder: 'Platform' },
    });
    expect(JSON.parse(cm.data['gitops-scaffolder.json'])).toEqual(dashboardJson());
    const dashboard = dashboardJson();
    expect(dashboard.uid).toBe('gitops-scaffolder');
    // Panels do not overlap on Grafana's 24-column grid.
    const cells = new Set<string>();
    for (const p of dashboard.panels) {
      const { x, y, w, h } = p.gridPos;
      expect(x + w).toBeLessThanOrEqual(24);
      for (let i = x; i < x + w; i++)
        for (let j = y; j < y + h; j++) {
          expect(cells.has(`${i},${j}`)).toBe(false);
          cells.add(`${i},${j}`);
        }
    }
    expect(DASHBOARD_FILE).toMatch(/dashboards\/gitops-scaffolder\.json$/);
  });

  it("the rule file passes promtool check rules; every alert has a severity, a summary and a description and selects this release's series", async () => {
    const rule = one(objects, 'PrometheusRule');
    expect(rule.metadata.labels.release).toBe('kube-prometheus-stack');
    const out = await promtool(['check', 'rules', 'rules.yaml'], { 'rules.yaml': { groups: rule.spec.groups } });
    expect(out).toMatch(/SUCCESS: 8 rules found/);
    const alerts = rule.spec.groups.flatMap((g: any) => g.rules);
    expect(alerts.map((a: any) => a.alert).sort()).toEqual([
      'GitopsScaffolderConsumerLag',
      'GitopsScaffolderDown',
      'GitopsScaffolderFailureRate',
      'GitopsScaffolderNotReady',
      'GitopsScaffolderProjectionLag',
      'GitopsScaffolderRunStuck',
      'GitopsScaffolderStepParked',
      'GitopsScaffolderStreamUnderReplicated',
    ]);
    for (const a of alerts) {
      expect(['warning', 'critical']).toContain(a.labels.severity);
      expect(a.annotations.summary.length).toBeGreaterThan(10);
      expect(a.annotations.description.length).toBeGreaterThan(20);
      expect(a.expr).toContain('job="release-gitops-scaffolder", namespace="kubeopera-core"');
    }
  });

  it('thresholds and extra labels come from the values', async () => {
    const custom = await helmTemplate({
      metrics: {
        prometheusRule: {
          enabled: true,
          stuckRunMinutes: 45,
          consumerLagEvents: 7,
          failureRatio: 0.5,
          minFailures: 2,
          additionalLabels: { team: 'platform' },
        },
      },
    });
    const alerts = Object.fromEntries(one(custom, 'PrometheusRule').spec.groups[0].rules.map((r: any) => [r.alert, r]));
    expect(alerts.GitopsScaffolderRunStuck.expr).toMatch(/> 2700$/);
    expect(alerts.GitopsScaffolderConsumerLag.expr).toMatch(/> 7$/);
    expect(alerts.GitopsScaffolderFailureRate.expr).toMatch(/\) > 0\.5\n/);
    expect(alerts.GitopsScaffolderFailureRate.expr).toMatch(/>= 2$/);
    expect(alerts.GitopsScaffolderRunStuck.labels).toEqual({ severity: 'warning', team: 'platform' });
    expect(alerts.GitopsScaffolderDown.labels).toEqual({ severity: 'critical', team: 'platform' });
  });

  it('each alert fires on the series it is about and stays quiet on healthy ones (promtool test rules)', async () => {
    const rule = one(objects, 'PrometheusRule');
    // The expressions as rendered; annotations are templates checked by `check rules` above.
    const groups = rule.spec.groups.map((g: any) => ({
      ...g,
      rules: g.rules.map(({ annotations: _, ...r }: any) => r),
    }));
    const fires = (alertname: string, eval_time: string, labels: Record<string, string>[]) => ({
      alertname,
      eval_time,
      exp_alerts: labels.map((l) => ({ exp_labels: { namespace: TARGET.namespace, ...l } })),
    });
    const warning = { severity: 'warning' };
    const tests = {
      rule_files: ['rules.yaml'],
      evaluation_interval: '1m',
      tests: [
        {
          interval: '1m',
          input_series: [
            // A run at cert-fetch without an event for ever longer; one at infra-pass that keeps moving.
            series('scaffold_active_run_idle_seconds', { pod: 'a', step: 'cert-fetch' }, '0+60x60'),
            series('scaffold_active_run_idle_seconds', { pod: 'a', step: 'infra-pass' }, '30x60'),
            // The projector far behind; a step consumer a little.
            series('scaffold_consumer_lag_events', { pod: 'a', consumer: 'projector' }, '500x30'),
            series('scaffold_consumer_lag_events', { pod: 'a', consumer: 'step-infra-pass' }, '5x30'),
            series('scaffold_projection_lag_seconds', { pod: 'a' }, '600x30'),
            // Half the finished runs fail.
            series('scaffold_runs_finished_total', { pod: 'a', status: 'failed', step: 'infra-pass' }, '0+1x90'),
            series('scaffold_runs_finished_total', { pod: 'a', status: 'succeeded', step: 'full-pass' }, '0+1x90'),
            // Replica b parks the infra pass of a run at 20 min; nothing at the full pass.
            series('scaffold_steps_parked_total', { pod: 'b', step: 'infra-pass' }, '0x20 1x40'),
            series('scaffold_steps_parked_total', { pod: 'b', step: 'full-pass' }, '0x60'),
            // Replica a lost PostgreSQL; b is fine; c does not answer scrapes.
            series('scaffold_ready', { pod: 'a' }, '0x30'),
            series('scaffold_ready', { pod: 'b' }, '1x30'),
            series('up', { pod: 'b' }, '1x30'),
            series('up', { pod: 'c' }, '0x30'),
            // SCAFFOLD_EVENTS loses a follower; SCAFFOLD_LOGS keeps its three.
            series('scaffold_stream_replicas_current', { pod: 'a', stream: 'SCAFFOLD_EVENTS' }, '3 3 2x30'),
            series('scaffold_stream_replicas_configured', { pod: 'a', stream: 'SCAFFOLD_EVENTS' }, '3x32'),
            series('scaffold_stream_replicas_current', { pod: 'a', stream: 'SCAFFOLD_LOGS' }, '3x32'),
            series('scaffold_stream_replicas_configured', { pod: 'a', stream: 'SCAFFOLD_LOGS' }, '3x32'),
          ],
          alert_rule_test: [
            fires('GitopsScaffolderRunStuck', '30m', []),
            fires('GitopsScaffolderRunStuck', '40m', [{ ...warning, step: 'cert-fetch' }]),
            fires('GitopsScaffolderConsumerLag', '5m', []),
            fires('GitopsScaffolderConsumerLag', '15m', [{ ...warning, consumer: 'projector' }]),
            fires('GitopsScaffolderProjectionLag', '10m', [warning]),
            fires('GitopsScaffolderFailureRate', '30m', [warning]),
            fires('GitopsScaffolderStepParked', '15m', []),
            fires('GitopsScaffolderStepParked', '25m', [{ ...warning, step: 'infra-pass' }]),
            fires('GitopsScaffolderNotReady', '3m', []),
            fires('GitopsScaffolderNotReady', '10m', [{ ...warning, pod: 'a' }]),
            fires('GitopsScaffolderDown', '10m', [{ severity: 'critical', ...TARGET, pod: 'c' }]),
            fires('GitopsScaffolderStreamUnderReplicated', '4m', []),
            fires('GitopsScaffolderStreamUnderReplicated', '10m', [{ ...warning, stream: 'SCAFFOLD_EVENTS' }]),
          ],
        },
        {
          // Healthy: runs finish, one failure among many (below minFailures), every copy current, everyone ready.
          interval: '1m',
          input_series: [
            series('scaffold_active_run_idle_seconds', { pod: 'a', step: 'cert-fetch' }, '45x60'),
            series('scaffold_consumer_lag_events', { pod: 'a', consumer: 'projector' }, '0x60'),
            series('scaffold_projection_lag_seconds', { pod: 'a' }, '0x60'),
            series('scaffold_runs_finished_total', { pod: 'a', status: 'failed', step: 'infra-pass' }, '0 1x59'),
            series('scaffold_runs_finished_total', { pod: 'a', status: 'succeeded', step: 'full-pass' }, '0+1x60'),
            series('scaffold_ready', { pod: 'a' }, '1x60'),
            series('up', { pod: 'a' }, '1x60'),
            series('scaffold_steps_parked_total', { pod: 'a', step: 'infra-pass' }, '0x60'),
            series('scaffold_stream_replicas_current', { pod: 'a', stream: 'SCAFFOLD_EVENTS' }, '3x60'),
            series('scaffold_stream_replicas_configured', { pod: 'a', stream: 'SCAFFOLD_EVENTS' }, '3x60'),
          ],
          alert_rule_test: alertsOf(groups).map((alertname) => fires(alertname, '50m', [])),
        },
      ],
    };
    const out = await promtool(['test', 'rules', 'tests.yaml'], { 'rules.yaml': { groups }, 'tests.yaml': tests });
    expect(out).toMatch(/SUCCESS/);
  });
});

const alertsOf = (groups: any[]): string[] => groups.flatMap((g) => g.rules.map((r: any) => r.alert));
