import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { Metrics } from '../metrics/metrics';
import { ScrapeRead } from '../metrics/scrape-read';
import { Readiness } from './readiness';

/** The readiness check as metrics, taken once per scrape: what /readyz would answer now. */
@Injectable()
export class ReadinessGauge {
  private readonly read = new ScrapeRead(() => this.set());
  private readonly ready: Gauge;
  private readonly dependencyUp: Gauge;

  constructor(
    metrics: Metrics,
    private readonly readiness: Readiness,
  ) {
    const collect = () => this.read.get();
    this.ready = new Gauge({
      name: 'scaffold_ready',
      help: 'Whether /readyz answers 200: NATS and PostgreSQL up, the streams and consumers in place (1 ready, 0 not)',
      registers: [metrics.registry],
      collect,
    });
    this.dependencyUp = new Gauge({
      name: 'scaffold_dependency_up',
      help: 'Whether this replica reaches a dependency: nats (JetStream) or postgres (1 up, 0 down)',
      labelNames: ['dependency'],
      registers: [metrics.registry],
      collect,
    });
  }

  private async set(): Promise<void> {
    const report = await this.readiness.check();
    this.ready.set(report.ok ? 1 : 0);
    this.dependencyUp.set({ dependency: 'nats' }, report.nats === 'up' ? 1 : 0);
    this.dependencyUp.set({ dependency: 'postgres' }, report.postgres === 'up' ? 1 : 0);
  }
}
