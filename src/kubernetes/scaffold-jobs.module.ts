import { Global, Module } from '@nestjs/common';
import { ScaffoldJobs } from '#libs/kube';
import type { AppConfig } from '../config/config';
import { APP_CONFIG } from '../config/config.module';
import { JOB_LOGS, JobLogs } from './job-logs';
import { managementKubeConfig } from './kube-clients';

/**
 * The runs' Jobs in the management cluster (EXECUTOR=kubernetes) and their pods' logs, which the API's log
 * answers include: imported by the executor and, without it, by an API replica (SERVICE_ROLE=api).
 */
@Global()
@Module({
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
  ],
  exports: [ScaffoldJobs, JOB_LOGS],
})
export class ScaffoldJobsModule {}
