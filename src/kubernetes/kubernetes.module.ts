import { Module } from '@nestjs/common';
import { RunnerApiModule } from '../runner-api/runner-api.module';
import { JobLauncher } from './job-launcher';
import { JobWatcher } from './job-watcher';
import { ScaffoldJobsModule } from './scaffold-jobs.module';

/**
 * EXECUTOR=kubernetes in the service: one Job per run (launcher) and a watcher that fails runs whose
 * Job failed or vanished. The Jobs run the steps (scaffold-runner). Imported only for that executor,
 * so the local executor never loads the Kubernetes client.
 */
@Module({
  imports: [RunnerApiModule, ScaffoldJobsModule],
  providers: [JobLauncher, JobWatcher],
})
export class KubernetesModule {}
