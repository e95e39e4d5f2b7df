import { Global, Module } from '@nestjs/common';
import { RunnerApiModule } from '../runner-api/runner-api.module';
import { ScaffoldJobs } from '../../libs/kube/src';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { JobLauncher } from './job-launcher';
import { JobWatcher } from './job-watcher';
import { JOB_LOGS, JobLogs } from './job-logs';
import { managementKubeConfig } from './kube-clients';

/**
 * EXECUTOR=kubernetes in the service: one Job per run (launcher) and a watcher that fails runs whose
 * Job failed or vanished. The Jobs run the steps (scaffold-runner). Imported only for that executor,
 * so the local executor never loads the Kubernetes client.
 */
@Global()
@Module({
  imports: [RunnerApiModule],
  providers: [
    {
      provide: ScaffoldJobs,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) =>
        new ScaffoldJobs(managementKubeConfig(config.kubeconfigPath), config.kubernetes),
    },
    {
      provide: JOB_LOGS,
      inject: [ScaffoldJobs],
      useFactory:
        (jobs: ScaffoldJobs): JobLogs =>
        (runId) =>
          jobs.logs(runId),
    },
    JobLauncher,
    JobWatcher,
  ],
  exports: [JOB_LOGS],
})
export class KubernetesModule {}
