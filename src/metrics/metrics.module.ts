import { DynamicModule, Global, Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller';
import { Metrics } from './metrics';
import { RunGauges } from './run-gauges';

/**
 * Prometheus metrics of the process (and of the read-model's active runs, so the read-model must be
 * there); the scrape endpoint only where there is an HTTP server.
 */
@Global()
@Module({})
export class MetricsModule {
  static forRoot(opts: { endpoint: boolean }): DynamicModule {
    return {
      module: MetricsModule,
      providers: [Metrics, RunGauges],
      exports: [Metrics],
      controllers: opts.endpoint ? [MetricsController] : [],
    };
  }
}
