import { DynamicModule, Module } from '@nestjs/common';
import { EventsController, HealthController, RUNTIME, ScaffoldsController } from './api/scaffolds.controller';
import type { Runtime } from './runtime';

/** Wiring only: the runtime (connections, workers, projector) is built before Nest and handed in. */
@Module({})
export class AppModule {
  static with(runtime: Runtime): DynamicModule {
    return { module: AppModule, controllers: [ScaffoldsController, EventsController, HealthController], providers: [{ provide: RUNTIME, useValue: runtime }] };
  }
}
