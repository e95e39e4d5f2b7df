import { DynamicModule, Global, Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller';
import { Metrics } from './metrics';

/** Prometheus metrics of the process; the scrape endpoint only where there is an HTTP server. */
@Global()
@Module({})
export class MetricsModule {
  static forRoot(opts: { endpoint: boolean }): DynamicModule {
    return {
      module: MetricsModule,
      providers: [Metrics],
      exports: [Metrics],
      controllers: opts.endpoint ? [MetricsController] : [],
    };
  }
}
