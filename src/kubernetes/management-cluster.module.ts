import { Global, Module } from '@nestjs/common';
import { KubeCredentialsSecrets } from '../../libs/kube/src';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { SUPPLIED_CREDENTIALS } from './credentials-source';
import { managementKubeConfig } from './kube-clients';

/**
 * What the service reads from the management cluster with either executor: supplied-credentials
 * Secrets (checked at POST). Imported only when the process can reach the cluster.
 */
@Global()
@Module({
  providers: [
    {
      provide: SUPPLIED_CREDENTIALS,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => new KubeCredentialsSecrets(() => managementKubeConfig(config.kubeconfigPath)),
    },
  ],
  exports: [SUPPLIED_CREDENTIALS],
})
export class ManagementClusterModule {}
