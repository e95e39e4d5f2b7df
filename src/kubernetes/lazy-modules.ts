import type { DynamicModule } from '@nestjs/common';
import type { AppConfig } from '../config/config';

/*
 * The Kubernetes modules are loaded only where they are used: @kubernetes/client-node costs about as
 * much to load as Nest itself, and the local executor without a management cluster never needs it.
 */

/** Management-cluster access, when the process can reach the cluster (KUBECONFIG, a service account, or EXECUTOR=kubernetes). */
export function managementClusterImports(config: AppConfig): Array<Promise<DynamicModule>> {
  if (!config.reachesManagementCluster) return [];
  return [import('./management-cluster.module').then((m) => ({ module: m.ManagementClusterModule }))];
}

/** EXECUTOR=kubernetes: the Job launcher and watcher. */
export const kubernetesExecutorModule = (): Promise<DynamicModule> =>
  import('./kubernetes.module').then((m) => ({ module: m.KubernetesModule }));

/** EXECUTOR=kubernetes on an API replica: the runs' Jobs, read for their pods' logs, without launcher or watcher. */
export const scaffoldJobsModule = (): Promise<DynamicModule> =>
  import('./scaffold-jobs.module').then((m) => ({ module: m.ScaffoldJobsModule }));
