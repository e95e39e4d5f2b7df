import { DynamicModule, Module } from '@nestjs/common';
import { STEP_SCOPE, StepConsumers, StepScope } from './step-consumers';

/** The step consumers (infra pass, sealed-secrets wait, certificate fetch, full pass) for every run or one. */
@Module({})
export class StepsModule {
  static forRoot(scope: StepScope = {}): DynamicModule {
    return { module: StepsModule, providers: [{ provide: STEP_SCOPE, useValue: scope }, StepConsumers] };
  }
}
