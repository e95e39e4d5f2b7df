import { Global, Module } from '@nestjs/common';
import { KubeCredentialsSecrets, KubeTargetClusters } from '#libs/kube';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { SUPPLIED_CREDENTIALS, TARGET_CLUSTERS } from './credentials-source';
import { managementKubeConfig } from './kube-clients';

/**
 * What this process reaches in the management cluster with either executor: supplied-credentials
 * Secrets (checked at POST and read by the steps) and the new clusters through their kubeconfig
 * Secrets (the steps' sealed-secrets wait and certificate fetch). Imported only when the process can
 * reach the cluster; the step consumers and the API take whichever of these is provided.
 */
@Global()
@Module({
  providers: [
    {
      provide: SUPPLIED_CREDENTIALS,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => new KubeCredentialsSecrets(() => managementKubeConfig(config.kubeconfigPath)),
    },
    {
      provide: TARGET_CLUSTERS,
      inject: [APP_CONFIG],
      useFactory: ({ steps, kubeconfigPath }: AppConfig) =>
        new KubeTargetClusters(() => managementKubeConfig(kubeconfigPath), steps.sealedSecrets, {
          deadlineMs: steps.sealedSecretsDeadlineMs,
          initialDelayMs: steps.pollInitialMs,
          maxDelayMs: steps.pollMaxMs,
        }),
    },
  ],
  exports: [SUPPLIED_CREDENTIALS, TARGET_CLUSTERS],
})
export class ManagementClusterModule {}
