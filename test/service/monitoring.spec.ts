import { randomUUID } from 'node:crypto';
import { STEPS } from '#libs/events';
import { monitoringExpressions, renderMonitoring, unknownMetrics } from '../support/chart-monitoring';
import { Rendered } from '../support/helm';
import { exportedSeriesNames } from '../support/promql';
import { waitFor } from '../support/service';
import { useServiceStack } from '../support/service-stack';

jest.setTimeout(120_000);

/** One sample line's value, by metric name and its exact label set as the exposition writes it. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/**
 * The chart's alerts and dashboard over what the running service exports, and the gauges they were
 * written for: active runs and how long they went without an event, stream replicas, readiness.
 */
describe('monitoring: the metrics the chart alerts on and charts are the ones /metrics serves', () => {
  const stack = useServiceStack();
  let rendered: Rendered[];
  const scrape = async () => {
    const res = await fetch(`${stack.svc.base}/metrics`);
    expect(res.status).toBe(200);
    return res.text();
  };
  beforeAll(async () => (rendered = await renderMonitoring()));

  it('every metric an alert, a panel or a dashboard variable names is one the service exports', async () => {
    const exported = exportedSeriesNames(await scrape());
    const expressions = monitoringExpressions(rendered);
    // Eight alerts, every panel query and the two variables: the check sees them all.
    expect(expressions.filter((e) => e.where.startsWith('alert')).length).toBe(8);
    expect(expressions.length).toBeGreaterThan(35);
    expect(unknownMetrics(expressions, exported)).toEqual([]);
    // The check fails on a name the service does not export (histogram suffixes on a counter included).
    expect(
      unknownMetrics(
        [
          { where: 'x', expr: 'sum(rate(scaffold_runs_bogus_total{job="a"}[5m]))' },
          { where: 'y', expr: 'scaffold_runs_started_total_bucket' },
        ],
        exported,
      ),
    ).toEqual(['x: scaffold_runs_bogus_total', 'y: scaffold_runs_started_total_bucket']);
  });

  it('reports active runs by step and the longest time one went without an event, from the read-model', async () => {
    const hoursAgo = (h: number) => new Date(Date.now() - h * 3600_000);
    const rows: Array<[string, string | null, Date]> = [
      ['running', 'cert-fetch', hoursAgo(2)],
      ['retrying', 'cert-fetch', hoursAgo(0.5)],
      ['queued', null, hoursAgo(0.01)],
      ['succeeded', 'full-pass', hoursAgo(5)], // ended: not active, however old
    ];
    for (const [status, step, updated] of rows)
      await stack.svc.runtime.ds.query(
        `INSERT INTO scaffold_runs (id, status, step, message, cluster_name, repo_url, branch, created_at, updated_at, last_seq, state)
         VALUES ($1, $2, $3, '', 'gauges', 'file:///nowhere.git', 'main', $4, $4, 0, '{}')`,
        [randomUUID(), status, step, updated],
      );
    const text = await scrape();
    expect(sample(text, 'scaffold_active_runs{step="cert-fetch"}')).toBe(2);
    expect(sample(text, 'scaffold_active_runs{step="none"}')).toBe(1);
    expect(sample(text, 'scaffold_active_runs{step="full-pass"}')).toBe(0);
    const idle = sample(text, 'scaffold_active_run_idle_seconds{step="cert-fetch"}')!;
    expect(idle).toBeGreaterThanOrEqual(7200);
    expect(idle).toBeLessThan(7200 + 60);
    expect(sample(text, 'scaffold_active_run_idle_seconds{step="none"}')).toBeLessThan(60);
    for (const step of STEPS.filter((s) => s !== 'cert-fetch'))
      expect(sample(text, `scaffold_active_run_idle_seconds{step="${step}"}`)).toBe(0);
  });

  it('reports each stream with its configured and current replicas, and readiness with its dependencies', async () => {
    const text = await scrape();
    for (const stream of Object.values(stack.svc.runtime.store.streams)) {
      expect(sample(text, `scaffold_stream_replicas_configured{stream="${stream}"}`)).toBe(1);
      expect(sample(text, `scaffold_stream_replicas_current{stream="${stream}"}`)).toBe(1);
    }
    expect(sample(text, 'scaffold_ready')).toBe(1);
    expect(sample(text, 'scaffold_dependency_up{dependency="nats"}')).toBe(1);
    expect(sample(text, 'scaffold_dependency_up{dependency="postgres"}')).toBe(1);
  });

  it("reports the generator threads' heap beside the main thread's (none before a pass: the pool starts empty)", async () => {
    const text = await scrape();
    const used = sample(text, 'scaffold_generator_heap_bytes{kind="used"}');
    const total = sample(text, 'scaffold_generator_heap_bytes{kind="total"}');
    expect(used).toBeGreaterThanOrEqual(0);
    expect(total).toBeGreaterThanOrEqual(used!);
  });

  it('while PostgreSQL refuses the service: scaffold_ready and postgres 0, no stale run figures, and back', async () => {
    await stack.db.refuseConnections(true);
    try {
      const down = await scrape();
      expect(sample(down, 'scaffold_ready')).toBe(0);
      expect(sample(down, 'scaffold_dependency_up{dependency="postgres"}')).toBe(0);
      expect(sample(down, 'scaffold_dependency_up{dependency="nats"}')).toBe(1);
      expect(down).not.toMatch(/^scaffold_active_runs\{/m);
    } finally {
      await stack.db.refuseConnections(false);
    }
    const up = await waitFor('readiness back', async () => {
      const text = await scrape();
      return sample(text, 'scaffold_ready') === 1 ? text : undefined;
    });
    expect(sample(up, 'scaffold_active_runs{step="cert-fetch"}')).toBe(2);
  });
});
