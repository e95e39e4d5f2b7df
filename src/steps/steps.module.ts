import { DynamicModule, Module } from '@nestjs/common';
import type { SuppliedCredentialsSource, TargetClusters } from '#libs/steps';
import { DeliveryModule } from '../delivery/delivery.module';
import { GitModule } from '../git/git.module';
import { SUPPLIED_CREDENTIALS, TARGET_CLUSTERS } from '../kubernetes/credentials-source';
import { StalledRunCheck } from './stalled-run-check';
import { STEP_SCOPE, StepConsumers, StepScope } from './step-consumers';

/**
 * The step consumers (infra pass, sealed-secrets wait, certificate fetch, full pass) of the service (the
 * local executor). They reach the new cluster and credentials Secrets where the management-cluster module is imported.
 * The stalled-run check re-drives a run whose trigger one of them lost.
 */
@Module({})
export class StepsModule {
  static forRoot(): DynamicModule {
    const scope = {
      provide: STEP_SCOPE,
      inject: [
        { token: TARGET_CLUSTERS, optional: true },
        { token: SUPPLIED_CREDENTIALS, optional: true },
      ],
      useFactory: (targets?: TargetClusters, credentials?: SuppliedCredentialsSource): StepScope => ({
        targets,
        credentials,
      }),
    };
    return {
      module: StepsModule,
      imports: [GitModule, DeliveryModule],
      providers: [scope, StepConsumers, StalledRunCheck],
    };
  }
}
