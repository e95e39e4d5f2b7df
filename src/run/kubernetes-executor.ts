import { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import type { JetStreamEventStore } from '../../libs/event-store/src';
import { KubeTargetClusters, ScaffoldJobs } from '../../libs/kube/src';
import type { StepSettings } from '../../libs/steps/src';
import type { AppConfig } from '../config';
import { JobLauncher } from './job-launcher';
import { JobWatcher } from './job-watcher';

/** The management cluster: in-cluster service account, or KUBECONFIG outside a cluster. */
export function managementKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromDefault();
  return kc;
}

export function kubeTargets(settings: StepSettings): KubeTargetClusters {
  return new KubeTargetClusters(managementKubeConfig, settings.sealedSecrets, {
    deadlineMs: settings.sealedSecretsDeadlineMs,
    initialDelayMs: settings.pollInitialMs,
    maxDelayMs: settings.pollMaxMs,
  });
}

/** EXECUTOR=kubernetes in the service: launch one Job per run and watch them; the Jobs run the steps. */
export class KubernetesExecutor {
  readonly jobs: ScaffoldJobs;
  private launcher: JobLauncher;
  private watcher: JobWatcher;

  constructor(store: JetStreamEventStore, ds: DataSource, config: AppConfig, logger: Logger) {
    this.jobs = new ScaffoldJobs(managementKubeConfig(), config.kubernetes);
    this.launcher = new JobLauncher(store, this.jobs, logger);
    this.watcher = new JobWatcher(store, ds, this.jobs, logger, { intervalMs: config.jobWatchIntervalMs, missingGraceMs: config.jobMissingGraceMs });
  }

  async start() {
    await this.launcher.start();
    this.watcher.start();
  }

  async stop() {
    await this.watcher.stop();
    await this.launcher.stop();
  }
}
