import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { Metrics } from '../metrics/metrics';
import { Readiness } from './readiness';

/** The readiness check as metrics, taken at scrape: what /readyz would answer now. */
@Injectable()
export class ReadinessGauge {
  constructor(metrics: Metrics, readiness: Readiness) {
    const up = new Gauge({
      name: 'scaffold_dependency_up',
      help: 'Whether this replica reaches a dependency: nats (JetStream) or postgres (1 up, 0 down)',
      labelNames: ['dependency'],
      registers: [metrics.registry],
    });
    new Gauge({
      name: 'scaffold_ready',
      help: 'Whether /readyz answers 200: NATS and PostgreSQL up, the streams and consumers in place (1 ready, 0 not)',
      registers: [metrics.registry],
      async collect() {
        const report = await readiness.check();
        this.set(report.ok ? 1 : 0);
        up.set({ dependency: 'nats' }, report.nats === 'up' ? 1 : 0);
        up.set({ dependency: 'postgres' }, report.postgres === 'up' ? 1 : 0);
      },
    });
  }
}
