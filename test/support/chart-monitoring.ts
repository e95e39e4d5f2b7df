import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHART, helmTemplate, Rendered } from './helm';
import { metricNames } from './promql';

/** The chart's values with every monitoring part on. */
export const MONITORING_ON = {
  metrics: {
    serviceMonitor: { enabled: true, labels: { release: 'kube-prometheus-stack' } },
    prometheusRule: { enabled: true, labels: { release: 'kube-prometheus-stack' } },
    dashboard: { enabled: true, namespace: 'monitoring', annotations: { grafana_folder: 'Platform' } },
  },
};

export const DASHBOARD_FILE = join(CHART, 'dashboards/gitops-scaffolder.json');

export const renderedKind = (objects: Rendered[], kind: string) => objects.filter((o) => o.obj.kind === kind);

/** Every PromQL expression the chart's monitoring holds, named by where it is: alerts, panels, dashboard variables. */
export function monitoringExpressions(objects: Rendered[]): Array<{ where: string; expr: string }> {
  const rules = renderedKind(objects, 'PrometheusRule').flatMap(({ obj }) =>
    obj.spec.groups.flatMap((g: any) =>
      g.rules.map((r: any) => ({ where: `alert ${r.alert ?? r.record}`, expr: String(r.expr) })),
    ),
  );
  const dashboards = renderedKind(objects, 'ConfigMap').flatMap(({ obj }) =>
    Object.entries<string>(obj.data ?? {})
      .filter(([key]) => key.endsWith('.json'))
      .flatMap(([, json]) => dashboardExpressions(JSON.parse(json))),
  );
  return [...rules, ...dashboards];
}

export function dashboardExpressions(dashboard: any): Array<{ where: string; expr: string }> {
  const panels = (dashboard.panels ?? []).flatMap((p: any) =>
    (p.targets ?? []).map((t: any) => ({ where: `panel "${p.title}" ${t.refId}`, expr: String(t.expr) })),
  );
  const variables = (dashboard.templating?.list ?? [])
    .filter((v: any) => v.type === 'query')
    .map((v: any) => ({ where: `variable ${v.name}`, expr: String(v.query?.query ?? v.query) }));
  return [...panels, ...variables];
}

/** Series Prometheus makes itself for every target, not the service. */
const SCRAPE_SERIES = new Set(['up']);

/** Each expression's metric names that are not in `exported` (nor Prometheus's own per-target series). */
export function unknownMetrics(expressions: Array<{ where: string; expr: string }>, exported: Set<string>): string[] {
  return expressions.flatMap(({ where, expr }) =>
    metricNames(expr)
      .filter((name) => !exported.has(name) && !SCRAPE_SERIES.has(name))
      .map((name) => `${where}: ${name}`),
  );
}

export const renderMonitoring = (values: object = MONITORING_ON) => helmTemplate(values);
export const dashboardJson = () => JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8'));
