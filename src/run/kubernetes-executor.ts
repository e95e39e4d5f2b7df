import { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import type { JetStreamEventStore } from '../../libs/event-store/src';
import { KubeTargetClusters, ScaffoldJobs } from '../../libs/kube/src';
import type { StepSettings } from '../../libs/steps/src';
import type { AppConfig } from '../config';
import { JobLauncher } from './job-launcher';
import { JobWatcher } from './job-watcher';

/** The management cluster: the kubeconfig file named by KUBECONFIG, else the in-cluster service account. */
export function managementKubeConfig(kubeconfigPath?: string): KubeConfig {
  const kc = new KubeConfig();
  if (kubeconfigPath) kc.loadFromFile(kubeconfigPath);
  else kc.loadFromDefault();
  return kc;
}

export function kubeTargets(settings: StepSettings, kubeconfigPath?: string): KubeTargetClusters {
  return new KubeTargetClusters(() => managementKubeConfig(kubeconfigPath), settings.sealedSecrets, {
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
    this.jobs = new ScaffoldJobs(managementKubeConfig(config.kubeconfigPath), config.kubernetes);
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
